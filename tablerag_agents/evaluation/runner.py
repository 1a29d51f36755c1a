"""Run methods over a dataset's fixed sample, record every question, summarise the run.

:func:`run_eval` loads a dataset, takes the seeded ``dev`` or ``test`` sample,
and for each method writes ``NAME.jsonl`` (one scored record per question, as
each finishes; a rerun resumes where a killed one stopped) and ``NAME.json``
(the summary: sample ids, git commit, model, settings, metrics with intervals).
"""

from __future__ import annotations

import importlib.util
import logging
import re
import subprocess
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from tqdm.auto import tqdm

from tablerag_agents.config import Settings
from tablerag_agents.evaluation.records import (
    DIRTY,
    FORMAT,
    RecordsFile,
    RunSpec,
    check_resumable,
    check_same_code,
    commits_of,
    find_prefix_run,
    mixes_code,
    now_iso,
    read_records,
    summary_path,
    write_summary,
)
from tablerag_agents.evaluation.types import EvalExample, Prediction

if TYPE_CHECKING:
    from tablerag_agents.evaluation.splits import Split
    from tablerag_agents.resources import Resources

logger = logging.getLogger(__name__)

DEFAULT_OUT = Path("eval-results")
"""Where runs land unless ``--out`` says otherwise (relative to the working directory)."""

_MODEL_KEYS = ("chat_model", "base_url", "temperature", "max_tokens", "embeddings", "n_ctx")


class _Method(Protocol):
    def run(self, example: EvalExample) -> Prediction: ...


@dataclass(frozen=True)
class RunOutcome:
    """Where one method's run was written, and its summary."""

    records: Path
    summary_file: Path
    summary: dict[str, Any]


def model_description(settings: Settings) -> dict[str, Any]:
    """Describe the chat model of ``settings`` (no secrets; what changes answers)."""
    data = settings.public_dict()
    return {key: data[key] for key in _MODEL_KEYS if key in data}


COMPANIONS = ("graphs", "prompts", "tools")
"""Subpackages that live in the repository's top level (mapped into ``tablerag_agents``)."""


def companion_folders() -> dict[str, Path]:
    """Where ``tablerag_agents.<name>`` of each of :data:`COMPANIONS` is loaded from."""
    folders: dict[str, Path] = {}
    for name in COMPANIONS:
        spec = importlib.util.find_spec(f"tablerag_agents.{name}")
        if spec is not None and spec.submodule_search_locations:
            folders[name] = Path(next(iter(spec.submodule_search_locations))).resolve()
    return folders


def _toplevel(folder: Path) -> Path | None:
    """The root of the git checkout that holds ``folder`` (None: not in one)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return Path(done.stdout.strip()).resolve() if done.returncode == 0 else None


def other_checkouts(package: Path, companions: dict[str, Path]) -> list[str]:
    """The companions loaded from another checkout than ``package``'s.

    An editable install maps ``tablerag_agents.graphs``/``prompts``/``tools``
    to the checkout it was installed from, so running a second checkout (a
    worktree frozen at another commit) with the same environment mixes two
    commits' code under one label.
    """
    root = _toplevel(package)
    return sorted(
        f"{name} ({folder})"
        for name, folder in companions.items()
        if root is not None and _toplevel(folder) != root
    )


def git_state(where: Path | None = None) -> dict[str, Any]:
    """Return ``{"commit", "dirty"}`` of the repository holding this package's code.

    ``commit`` is ``"unknown"`` (and ``dirty`` None) when the package is not a
    file tracked in a git checkout (an installed wheel, no git on the PATH).
    For the package itself (no ``where``), code loaded from another checkout
    (:func:`other_checkouts`) counts as a change to the commit: ``dirty`` is
    True and ``elsewhere`` names it.
    """
    folder = where or Path(__file__).resolve().parent

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=30
        )
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip())
        return done.stdout.strip()

    try:
        if where is None:  # the package itself must be tracked, not just inside some repo
            git("ls-files", "--error-unmatch", "__init__.py")
        commit = git("rev-parse", "HEAD")
        dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, RuntimeError, subprocess.TimeoutExpired):
        return {"commit": "unknown", "dirty": None}
    if where is None and (elsewhere := other_checkouts(folder, companion_folders())):
        logger.warning(
            "tablerag_agents is loaded from %s but %s from another checkout: the records "
            "are labelled %s+dirty. Install this checkout (pip install -e .) to run it alone",
            folder.parent,
            ", ".join(elsewhere),
            commit,
        )
        return {"commit": commit, "dirty": True, "elsewhere": elsewhere}
    return {"commit": commit, "dirty": dirty}


def code_label(state: dict[str, Any]) -> str:
    """The label records carry for the code that answered them: ``<sha>`` or ``<sha>+dirty``."""
    return str(state["commit"]) + (DIRTY if state.get("dirty") else "")


def parse_settings(pairs: Iterable[str]) -> dict[str, str]:
    """Parse ``KEY=VALUE`` strings (``--set``) into a dict of raw values."""
    values: dict[str, str] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set wants KEY=VALUE, got {pair!r}")
        values[key.strip()] = raw
    return values


def default_name(spec: RunSpec) -> str:
    """A file name that tells runs apart: dataset, split, method, settings, n, seed
    (or the id list's name instead of the seed)."""
    parts = [spec.dataset, spec.split, spec.method]
    parts += [f"{k}={v}" for k, v in sorted(spec.settings.items())]
    parts.append(f"n{spec.n_requested}")
    if spec.ids_file is None:
        parts.append(f"seed{spec.seed}")
    else:
        parts.append(f"ids-{Path(spec.ids_file).stem}")
    return re.sub(r"[^A-Za-z0-9._=+-]+", "_", "-".join(parts))


def predict(method: _Method, example: EvalExample) -> Prediction:
    """Run ``method`` on one example; an exception becomes an error prediction.

    ``KeyboardInterrupt`` (and other non-``Exception`` errors) propagate: they
    stop the run, which resumes from its records file.
    """
    started = time.perf_counter()
    try:
        prediction = method.run(example)
    except Exception as exc:  # the exception rate counts it; the run goes on
        logger.warning("%s raised on %s: %s", type(method).__name__, example.id, exc)
        prediction = Prediction(error=True, error_message=f"{type(exc).__name__}: {exc}")
    if not prediction.seconds:
        prediction.seconds = time.perf_counter() - started
    return prediction


def _predictions(
    method: _Method, todo: Sequence[EvalExample], workers: int
) -> Iterator[tuple[EvalExample, Prediction]]:
    """Yield ``(example, prediction)`` as each finishes (threads when ``workers > 1``)."""
    if workers <= 1:
        for example in todo:
            yield example, predict(method, example)
        return
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="eval")
    try:
        futures = {pool.submit(predict, method, ex): ex for ex in todo}
        for future in as_completed(futures):
            yield futures[future], future.result()
    finally:  # an interrupt: questions not started are dropped, the rerun does them
        pool.shutdown(wait=False, cancel_futures=True)


def prediction_from_record(record: dict[str, Any]) -> Prediction:
    """Rebuild the :class:`Prediction` stored in a record."""
    return Prediction(**{f.name: record[f.name] for f in fields(Prediction) if f.name in record})


def evaluate(
    method: _Method,
    examples: Sequence[EvalExample],
    spec: RunSpec,
    records_path: Path,
    *,
    workers: int = 1,
    progress: bool = True,
    background: dict[str, Any] | None = None,
    allow_mixed_commits: bool = False,
) -> RunOutcome:
    """Run ``method`` on every example not yet in ``records_path``, then summarise.

    ``background`` (see :func:`background_sources`) is copied into the summary.
    Records answered by other code (another commit, a dirty tree) are resumed,
    or reused from a smaller run, only with ``allow_mixed_commits``.

    Raises:
        RunMismatchError: ``records_path`` holds a run with another spec.
        MixedCommitsError: ``records_path`` holds answers of other code.
    """
    from tablerag_agents.evaluation.metrics import score

    label = code_label(git_state())  # the code that answers this session's questions
    check_resumable(records_path, spec)  # another configuration: the first thing to say
    check_same_code(records_path, label, allow_mixed=allow_mixed_commits)
    reuse: list[dict[str, Any]] = []
    if not records_path.exists() and (found := find_prefix_run(records_path.parent, spec)):
        donor, reuse = found
        if mixes_code(commits_of(reuse), label) and not allow_mixed_commits:
            logger.warning(
                "%s: not reusing the records of %s: they were answered at %s, this code is %s "
                "(--allow-mixed-commits reuses them)",
                records_path.name,
                donor.name,
                ", ".join(sorted(commits_of(reuse))),
                label,
            )
            reuse = []
        else:
            logger.warning(
                "%s: reusing %d records of %s (the same run on a prefix of this sample)",
                records_path.name,
                len(reuse),
                donor.name,
            )
    with RecordsFile.open(records_path, spec, reuse=reuse) as records:
        done = records.done_ids
        todo = [ex for ex in examples if ex.id not in done]
        if done:
            logger.info("%s: resuming, %d of %d done", records_path, len(done), len(examples))
        with tqdm(
            total=len(examples),
            initial=len(examples) - len(todo),
            desc=spec.method,
            unit="q",
            disable=not progress,
        ) as bar:
            right = sum(bool(r.get("correct")) for r in records.records)
            for example, prediction in _predictions(method, todo, workers):
                scores = score(example, prediction)
                records.append(
                    {
                        "id": example.id,
                        "method": spec.method,
                        "question": example.question,
                        "gold": example.answers,
                        **asdict(prediction),
                        **scores,
                        "git_commit": label,
                    }
                )
                right += bool(scores.get("correct"))
                if "correct" in scores:
                    bar.set_postfix_str(f"right {right}/{len(records.records)}", refresh=False)
                bar.update(1)
        by_id = {str(r["id"]): r for r in records.records}
        started_at = records.started_at
    ordered = [by_id[ex.id] for ex in examples]
    summary = summarize_run(spec, examples, ordered, started_at=started_at, background=background)
    out = summary_path(records_path)
    write_summary(out, summary)
    return RunOutcome(records_path, out, summary)


def summarize_run(
    spec: RunSpec,
    examples: Sequence[EvalExample],
    records: Sequence[dict[str, Any]],
    *,
    started_at: str,
    background: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Build the summary of a finished run (spec, provenance and metrics)."""
    from tablerag_agents.evaluation.metrics import summarize_predictions

    predictions = [prediction_from_record(r) for r in records]
    extra = {"background": background} if background else {}
    return {
        "format": FORMAT,
        **asdict(spec),
        "n": len(spec.ids),
        "task": examples[0].task if examples else None,
        "git": git_state(),
        "answered_at_commits": dict(
            Counter(str(r.get("git_commit", "unrecorded")) for r in records)
        ),
        "metrics": summarize_predictions(list(examples), predictions),
        **extra,
        "started_at": started_at,
        "finished_at": now_iso(),
    }


def background_sources(settings: dict[str, str], resources: Settings) -> dict[str, Any] | None:
    """Where a run's Wikipedia background came from, when ``--set wikipedia=true``.

    The provider (online, offline, auto) and the offline corpus are settings,
    not part of the run's identity, so the summary says which ones answered
    (the corpus by file name only: no machine paths).
    """
    from tablerag_agents.graphs.context_overrides import context_from_settings

    try:  # read the switch as the graph reads it
        run_settings = {k: v for k, v in settings.items() if k != "index_dir"}  # graph's own
        wanted = context_from_settings(run_settings).wikipedia
    except ValueError:  # not graph settings (a baseline's options): no background
        return None
    if not wanted:
        return None
    corpus = resources.wiki_intros
    return {"wikipedia": resources.wikipedia, "wiki_intros": corpus.name if corpus else None}


def run_eval(
    *,
    dataset: str,
    data_path: Path,
    methods: Sequence[str],
    split: str,
    n: int | None,
    seed: int,
    settings: dict[str, str],
    resources: Resources,
    ids_file: Path | None = None,
    out_dir: Path = DEFAULT_OUT,
    name: str | None = None,
    workers: int = 1,
    progress: bool = True,
    summary_only: bool = False,
    allow_mixed_commits: bool = False,
) -> list[RunOutcome]:
    """Evaluate each method on the seeded ``split`` sample of a dataset.

    Args:
        dataset: Loader name (see ``evaluation.loaders.DATASETS``).
        data_path: The dataset's file or folder.
        methods: Method names (see ``evaluation.methods.METHOD_NAMES``).
        split: ``dev`` (for tuning) or ``test`` (reported once).
        n: Sample size (None with ``ids_file``).
        seed: Seed of the sample.
        ids_file: A file of question ids (one per line) to ask instead of a
            seeded sample, in its order; every id must be on ``split``'s side.
        settings: ``--set`` values passed to every method.
        resources: Models, sandbox and caches shared by the whole run (not closed here).
        out_dir: Folder for ``NAME.jsonl`` and ``NAME.json``.
        name: File name stem; with several methods ``NAME-METHOD``. Default:
            :func:`default_name`.
        workers: Questions answered at once (threads; for hosted models).
        progress: Show a progress bar.
        summary_only: Ask nothing: summarise the questions each run has recorded
            so far (see :func:`summarize_recorded`).
        allow_mixed_commits: Resume records answered by other code (another
            commit, a dirty tree); the summary's ``answered_at_commits`` and the
            report list them.

    Returns:
        One outcome per method, in order.

    Raises:
        RunMismatchError: A records file holds a run with another spec.
        MixedCommitsError: A records file holds answers of other code.
        FileNotFoundError: ``summary_only`` and a method has no records file.
    """
    from tablerag_agents.evaluation.loaders import load_dataset
    from tablerag_agents.evaluation.methods import make_method
    from tablerag_agents.evaluation.splits import pick_examples, read_ids, split_examples

    if split not in ("dev", "test"):
        raise ValueError(f"--split must be dev or test, not {split!r}")
    if n is None and ids_file is None:
        raise ValueError("give --n (a seeded sample) or --ids (a file of question ids)")
    if n is not None and ids_file is not None:
        raise ValueError("give either --n (a seeded sample) or --ids (a list of ids), not both")
    loaded = load_dataset(dataset, data_path)
    if ids_file is None:
        examples = split_examples(loaded, cast("Split", split), n, seed)
    else:
        ids = read_ids(ids_file.read_text(encoding="utf-8"))
        examples = pick_examples(loaded, cast("Split", split), ids)
    if not examples:
        raise ValueError(f"the {split} sample of {data_path} is empty")
    planned: list[tuple[str, RunSpec, Path]] = []
    label = code_label(git_state())
    for method_name in methods:
        spec = RunSpec(
            dataset=dataset,
            data_path=str(data_path),
            method=method_name,
            split=split,
            seed=seed,
            n_requested=len(examples) if n is None else n,
            ids=[ex.id for ex in examples],
            ids_file=None if ids_file is None else str(ids_file),
            settings=dict(settings),
            model=model_description(resources.settings),
        )
        stem = default_name(spec) if name is None else name
        if name is not None and len(methods) > 1:
            stem = f"{name}-{method_name}"
        path = out_dir / f"{stem}.jsonl"
        # Refuse a bad name, setting or records file before any question runs.
        check_resumable(path, spec)
        if not summary_only:
            check_same_code(path, label, allow_mixed=allow_mixed_commits)
        planned.append((method_name, spec, path))
    background = background_sources(settings, resources.settings)
    if summary_only:
        return [
            summarize_recorded(examples, spec, path, background=background)
            for _, spec, path in planned
        ]
    # Every method is built (and its settings checked) before any question runs.
    made = [make_method(name, resources, dict(settings)) for name, _, _ in planned]
    return [
        evaluate(
            method,
            examples,
            spec,
            path,
            workers=workers,
            progress=progress,
            background=background,
            allow_mixed_commits=allow_mixed_commits,
        )
        for method, (_, spec, path) in zip(made, planned, strict=True)
    ]


def summarize_recorded(
    examples: Sequence[EvalExample],
    spec: RunSpec,
    records_path: Path,
    *,
    background: dict[str, Any] | None = None,
) -> RunOutcome:
    """Write the summary of the questions a run has recorded so far, asking nothing.

    For a run still going or stopped before the end: the metrics cover the
    recorded questions only, and the summary says so (``partial``: done / of),
    so a report never passes it off as the whole sample. A finished run gets
    the same summary as :func:`evaluate` writes.

    Raises:
        FileNotFoundError: The run has recorded nothing yet.
    """
    if not records_path.exists():
        raise FileNotFoundError(f"{records_path}: no records yet (run without --summary-only)")
    check_resumable(records_path, spec)
    header, records = read_records(records_path)
    by_id = {str(r["id"]): r for r in records}
    done = [ex for ex in examples if ex.id in by_id]
    if not done:
        raise FileNotFoundError(f"{records_path}: no question of this sample is recorded yet")
    summary = summarize_run(
        spec,
        done,
        [by_id[ex.id] for ex in done],
        started_at=header["started_at"],
        background=background,
    )
    if len(done) < len(examples):
        summary["n"] = len(done)
        summary["partial"] = {"done": len(done), "of": len(examples)}
    out = summary_path(records_path)
    write_summary(out, summary)
    return RunOutcome(records_path, out, summary)
