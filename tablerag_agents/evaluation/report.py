"""Side-by-side reports of evaluation runs: a Markdown table per split, plus plots.

Honest by construction: every table and metric column is labelled with its
split, a table requested as ``test`` refuses a ``dev`` run, runs of one
dataset on different question samples get a note that they are not
comparable, a run whose questions were answered by several commits gets a
note listing them, and a run of the pandas agent carries its security warning.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tablerag_agents.evaluation.metrics import paired_comparison
from tablerag_agents.evaluation.pandas_agent import PANDAS_AGENT_WARNING
from tablerag_agents.evaluation.records import read_records, read_summary

SPLITS = ("test", "dev")
"""Known splits, in the order their tables appear."""

PANDAS_AGENT_METHODS = frozenset({"pandas_agent"})
"""Methods whose runs carry :data:`PANDAS_AGENT_WARNING`."""


class SplitLabelError(ValueError):
    """A run would be shown under a split it was not run on."""


@dataclass(frozen=True)
class Run:
    """One run summary, as read from its JSON file."""

    path: Path
    data: dict[str, Any]
    tag: str = ""
    """Set when another run of the report has the same label: its commit or file name."""

    @property
    def metrics(self) -> dict[str, Any]:
        """The run's metrics (``summarize_predictions`` output)."""
        return dict(self.data["metrics"])

    @property
    def split(self) -> str:
        """The split the run's sample came from."""
        return str(self.data.get("split", ""))

    @property
    def label(self) -> str:
        """Method name with its settings, e.g. ``graph (budget=100)``."""
        settings = self.data.get("settings") or {}
        extra = ", ".join(f"{k}={v}" for k, v in sorted(settings.items()))
        label = f"{self.data['method']} ({extra})" if extra else str(self.data["method"])
        return f"{label} @{self.tag}" if self.tag else label

    @property
    def partial(self) -> tuple[int, int] | None:
        """``(recorded, sample size)`` for a summary of an unfinished run, else None."""
        part = self.data.get("partial")
        return (int(part["done"]), int(part["of"])) if part else None

    @property
    def n_label(self) -> str:
        """Questions scored, e.g. ``100`` or ``62 of 100 (partial)``."""
        if self.partial:
            return f"{self.partial[0]} of {self.partial[1]} (partial)"
        return str(self.metrics.get("n", self.data.get("n", "")))

    @property
    def metric(self) -> str:
        """Name of the headline metric: ``accuracy`` or ``bleu``."""
        return str(self.metrics.get("metric", "accuracy"))

    @property
    def value(self) -> float:
        """The headline metric's value."""
        return float(self.metrics["value"])

    @property
    def interval(self) -> tuple[float, float]:
        """The headline metric's 95% bootstrap interval."""
        low, high = self.metrics["ci"]
        return float(low), float(high)


@dataclass
class Report:
    """What :func:`write_report` produced."""

    markdown: str
    markdown_path: Path | None = None
    plots: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def load_runs(paths: Sequence[Path]) -> list[Run]:
    """Read run summaries (``NAME.json`` from ``tablerag eval``)."""
    if not paths:
        raise ValueError("give at least one run summary (RUN.json)")
    runs = []
    for path in paths:
        data = read_summary(path)
        if data.get("split") not in SPLITS:
            raise SplitLabelError(f"{path} records no split (dev or test): cannot label it")
        runs.append(Run(path, data))
    return _tag_namesakes(runs)


def _tag_namesakes(runs: list[Run]) -> list[Run]:
    """Tell apart runs with the same label: by commit if theirs differ, else by file name."""
    by_label: dict[str, list[int]] = {}
    for i, run in enumerate(runs):
        by_label.setdefault(run.label, []).append(i)
    tagged = list(runs)
    for members in by_label.values():
        if len(members) < 2:
            continue
        commits = [str((runs[i].data.get("git") or {}).get("commit") or "")[:7] for i in members]
        use_commit = all(commits) and len(set(commits)) == len(commits)
        for i, commit in zip(members, commits, strict=True):
            tagged[i] = replace(runs[i], tag=commit if use_commit else runs[i].path.stem)
    return tagged


def check_splits(runs: Sequence[Run], column_split: str | None) -> None:
    """Refuse runs whose split differs from the one the table is labelled with.

    Raises:
        SplitLabelError: A run is not on ``column_split``.
    """
    if column_split is None:
        return
    if column_split not in SPLITS:
        raise SplitLabelError(f"unknown split {column_split!r}; choose from {', '.join(SPLITS)}")
    wrong = [run for run in runs if run.split != column_split]
    if wrong:
        listed = ", ".join(f"{run.path} ({run.split})" for run in wrong)
        raise SplitLabelError(
            f"refusing to put runs in a table labelled {column_split}: {listed} "
            f"{'is' if len(wrong) == 1 else 'are'} not on the {column_split} split. "
            "Leave them out, or drop --column-split to get one table per split."
        )


def _fmt_metric(metric: str, value: float) -> str:
    return f"{value:.1f}" if metric == "bleu" else f"{value:.3f}"


def _metric_title(runs: Sequence[Run], split: str) -> str:
    names = {"accuracy": "accuracy", "bleu": "BLEU"}
    kinds = sorted({names.get(r.metric, r.metric) for r in runs})
    return f"{' / '.join(kinds)} ({split})"


def _row(run: Run, with_rouge: bool, with_hits: bool) -> list[str]:
    m = run.metrics
    low, high = run.interval
    cells = [
        run.label,
        str(run.data["dataset"]),
        run.split,
        run.n_label,
        _fmt_metric(run.metric, run.value),
        f"[{_fmt_metric(run.metric, low)}, {_fmt_metric(run.metric, high)}]",
    ]
    if with_rouge:
        rouge = m.get("rouge_l")
        ci = m.get("rouge_l_ci")
        cells.append(
            "" if rouge is None else f"{rouge:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
        )
    if with_hits:
        hits = m.get("hits") or {}
        cells.append(" / ".join(f"{float(v):.3f}" for _, v in sorted(hits.items(), key=_k)))
    cells += [
        f"{m['mean_input_tokens']:.0f}",
        f"{m['mean_output_tokens']:.0f}",
        f"{m['mean_seconds']:.1f} (p50 {m['p50_seconds']:.1f})",
        f"{100 * m['exception_rate']:.1f}%",
    ]
    return cells


def _k(item: tuple[str, Any]) -> int:
    return int(item[0])


def _table(runs: Sequence[Run], split: str) -> list[str]:
    with_rouge = any("rouge_l" in r.metrics for r in runs)
    hit_keys = sorted({k for r in runs for k in (r.metrics.get("hits") or {})}, key=int)
    header = ["method", "dataset", "split", "n", _metric_title(runs, split), "95% CI"]
    if with_rouge:
        header.append(f"ROUGE-L ({split}) [95% CI]")
    if hit_keys:
        header.append(f"HITS@{'/'.join(hit_keys)} ({split})")
    header += ["prompt tokens/q", "completion tokens/q", "s/q", "exception rate"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for run in runs:
        cells = [c.replace("|", "\\|") for c in _row(run, with_rouge, bool(hit_keys))]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _chat_model(run: Run) -> str:
    return str((run.data.get("model") or {}).get("chat_model", "?"))


def comparability_notes(runs: Sequence[Run]) -> list[str]:
    """Notes for runs of one dataset and split that are not on the same questions/model."""
    notes = []
    groups: dict[tuple[str, str], list[Run]] = {}
    for run in runs:
        groups.setdefault((str(run.data["dataset"]), run.split), []).append(run)
    for (dataset, split), group in groups.items():
        samples: dict[tuple[str, ...], list[Run]] = {}
        for run in group:
            samples.setdefault(tuple(run.data.get("ids") or ()), []).append(run)
        longest = max(samples, key=len)
        if len(samples) > 1 and all(ids == longest[: len(ids)] for ids in samples):
            sizes = "; ".join(
                f"n={len(ids)}: " + ", ".join(r.label for r in members)
                for ids, members in sorted(samples.items(), key=lambda item: -len(item[0]))
            )
            notes.append(
                f"Not comparable row by row: the {dataset} {split} samples are prefixes of one "
                f"seeded order ({sizes}); the paired table compares runs on the questions "
                "they share."
            )
        elif len(samples) > 1:
            described = "; ".join(
                f"sample {number} (n={len(ids)}, seed {members[0].data.get('seed')}): "
                + ", ".join(r.label for r in members)
                for number, (ids, members) in enumerate(samples.items(), 1)
            )
            notes.append(
                f"Not comparable: the {dataset} {split} runs are on different question "
                f"samples ({described})."
            )
        for run in group:
            if run.partial:
                done, of = run.partial
                notes.append(
                    f"Partial: {run.label} ({run.path.name}) recorded {done} of its {of} "
                    "questions; its row covers those only (paired comparisons use the "
                    "questions both runs recorded)."
                )
        models = {json.dumps(r.data.get("model"), sort_keys=True) for r in group}
        if len(models) > 1:
            used = "; ".join(f"{r.label}: {_chat_model(r)}" for r in group)
            notes.append(f"The {dataset} {split} runs use different models ({used}).")
    return notes


def mixed_commit_notes(runs: Sequence[Run]) -> list[str]:
    """A note for each run whose questions were answered by more than one commit."""
    notes = []
    for run in runs:
        counts = run.data.get("answered_at_commits") or {}
        if len(counts) > 1:
            listed = ", ".join(f"{c} ({k} questions)" for c, k in sorted(counts.items()))
            notes.append(
                f"Mixed commits: {run.label} ({run.path.name}) was answered by {len(counts)} "
                f"versions of the code: {listed}; its figures mix them (the run was resumed "
                "with --allow-mixed-commits)."
            )
    return notes


def question_scores(run: Run) -> dict[str, float] | None:
    """Per-question scores of a run from the records file beside its summary.

    The score is ``correct`` (1/0) for accuracy runs and sentence ROUGE-L for
    BLEU runs (corpus BLEU has no per-question value). None when the records
    file is not there.
    """
    path = run.path.with_suffix(".jsonl")
    if not path.exists():
        return None
    key = "rouge_l" if run.metric == "bleu" else "correct"
    _, records = read_records(path)
    return {str(r["id"]): float(r[key]) for r in records if r.get(key) is not None}


def _pairs(group: Sequence[Run], baseline: str | None) -> list[tuple[Run, Run]]:
    if baseline is None:
        return [(a, b) for i, a in enumerate(group) for b in group[i + 1 :]]
    bases = [r for r in group if baseline in (r.data["method"], r.label)]
    return [(a, b) for b in bases for a in group if a is not b]


def paired_lines(runs: Sequence[Run], baseline: str | None = None) -> list[str]:
    """Markdown rows comparing runs of one dataset and split on their shared questions.

    Every pair (or every run against the runs of method/label ``baseline``)
    whose records files share questions gets its two scores on those
    questions, the difference and the ratio, each with a paired bootstrap
    interval. Empty when no pair shares a question.
    """
    groups: dict[tuple[str, str], list[Run]] = {}
    for run in runs:
        groups.setdefault((str(run.data["dataset"]), run.split), []).append(run)
    rows = []
    for (dataset, split), group in groups.items():
        scores = {id(r): question_scores(r) for r in group}
        for a, b in _pairs(group, baseline):
            sa, sb = scores[id(a)], scores[id(b)]
            if sa is None or sb is None or a.metric != b.metric:
                continue
            shared = sorted(set(sa) & set(sb))
            if not shared:
                continue
            cmp = paired_comparison([sa[q] for q in shared], [sb[q] for q in shared])
            ratio = "n/a (B scored 0)" if cmp.ratio is None else f"{cmp.ratio:.2f}"
            if cmp.ratio_ci is not None:
                ratio += f" [{cmp.ratio_ci[0]:.2f}, {cmp.ratio_ci[1]:.2f}]"
            elif cmp.ratio is not None:
                ratio += " (no interval: B scores 0 in over 5% of resamples)"
            low, high = cmp.difference_ci
            cells = [
                a.label,
                b.label,
                f"{dataset} {split}",
                str(cmp.n),
                f"{cmp.mean_a:.3f}",
                f"{cmp.mean_b:.3f}",
                f"{cmp.difference:+.3f} [{low:+.3f}, {high:+.3f}]",
                ratio,
            ]
            rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    if not rows:
        return []
    header = ["A", "B", "sample", "shared n", "A", "B", "A - B [95% CI]", "A / B [95% CI]"]
    return [
        "## Paired comparisons (same questions)",
        "",
        "Scores on the questions both runs recorded: accuracy, or sentence ROUGE-L for "
        "free-form runs. Intervals resample the questions jointly.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *rows,
        "",
    ]


def _answered_at(run: Run) -> str:
    """Which commits answered the questions, when that is not just the summary's commit."""
    counts = run.data.get("answered_at_commits") or {}
    commit = str((run.data.get("git") or {}).get("commit", ""))
    if not counts or set(counts) == {commit}:
        return ""
    listed = ", ".join(f"{c[:12]}: {k}" for c, k in sorted(counts.items()))
    return f" (questions answered at: {listed})"


def render_markdown(
    runs: Sequence[Run],
    *,
    column_split: str | None = None,
    plots: Sequence[Path] = (),
    baseline: str | None = None,
) -> tuple[str, list[str]]:
    """Render the report as Markdown; return it and the warnings it contains.

    Raises:
        SplitLabelError: A run is not on ``column_split``.
    """
    check_splits(runs, column_split)
    lines = ["# Evaluation report", ""]
    warnings = []
    if any(r.data["method"] in PANDAS_AGENT_METHODS for r in runs):
        warnings.append(PANDAS_AGENT_WARNING)
        lines += [f"> **Warning:** {PANDAS_AGENT_WARNING}", ""]
    for split in SPLITS:
        group = [r for r in runs if r.split == split]
        if not group:
            continue
        title = f"## {split} split"
        if split == "dev":
            title += " (tuning sample: not a reported result)"
        lines += [title, "", *_table(group, split), ""]
    lines += paired_lines(runs, baseline)
    notes = comparability_notes(runs) + mixed_commit_notes(runs)
    if notes:
        lines += ["## Notes", "", *[f"- {note}" for note in notes], ""]
    lines += ["## Runs", ""]
    for run in runs:
        git = run.data.get("git") or {}
        commit = str(git.get("commit", "unknown"))[:12] + (" (dirty)" if git.get("dirty") else "")
        lines.append(
            f"- `{run.path.name}`: {run.label} on {run.data['dataset']} {run.split} "
            f"(seed {run.data.get('seed')}, n={run.n_label}), model "
            f"{_chat_model(run)}, commit {commit}{_answered_at(run)}, "
            f"finished {run.data.get('finished_at', '?')}"
        )
    lines.append("")
    if plots:
        lines += ["## Plots", ""]
        for plot in plots:
            lines += [f"![{plot.stem}]({plot.name})", ""]
    return "\n".join(lines), warnings


def write_report(
    paths: Sequence[Path],
    out_dir: Path,
    *,
    column_split: str | None = None,
    plots: bool = True,
    baseline: str | None = None,
) -> Report:
    """Read run summaries and write ``report.md`` and PNG plots into ``out_dir``.

    Raises:
        SplitLabelError: A run is not on ``column_split`` (nothing is written).
    """
    runs = load_runs(paths)
    check_splits(runs, column_split)  # before any file is written
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    skipped = []
    if plots and importlib.util.find_spec("matplotlib") is None:
        skipped.append(
            "plots skipped: matplotlib is not installed (pip install 'tablerag-agents[eval]')"
        )
    elif plots:
        from tablerag_agents.evaluation.plots import write_plots

        written = write_plots(runs, out_dir)
    markdown, warnings = render_markdown(
        runs, column_split=column_split, plots=written, baseline=baseline
    )
    path = out_dir / "report.md"
    path.write_text(markdown, encoding="utf-8")
    return Report(markdown, path, written, warnings + skipped)
