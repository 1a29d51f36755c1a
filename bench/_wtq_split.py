"""WTQ question samples on the evaluation harness's dev/test split (bench helper).

The bench scripts draw their questions exactly as ``tablerag eval --dataset wtq``
does: every question's side (``dev`` or ``test``) is fixed by a hash of its
table (:mod:`tablerag_agents.evaluation.splits`), and a seed orders each side.
So a bench's ``--split test`` sample never shares a table with any dev sample,
and the same ``--split/--n/--seed`` give the harness's own sample.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from _results import result_path

from tablerag_agents.evaluation.datasets import QAExample, load_wtq
from tablerag_agents.evaluation.loaders import load_wtq_examples
from tablerag_agents.evaluation.splits import Split, split_examples, split_of

SPLIT_RULE = "tablerag-split-v1 (tablerag_agents/evaluation/splits.py, by table)"
"""Recorded in bench summaries: which definition of dev/test a sample used."""


def wtq_side(
    questions: Path, tables_root: Path, split: Split, seed: int, *, exclude: Iterable[str] = ()
) -> list[QAExample]:
    """Every question on one side of the split, in the seed's order (``exclude`` left out).

    ``tables_root`` must be the questions file's folder (the harness's layout),
    so the table ids, and hence the sides, are the harness's.
    """
    if Path(tables_root).resolve() != Path(questions).resolve().parent:
        raise SystemExit(
            f"--tables-root {tables_root} is not the folder of {questions}: the table ids, "
            "and so the dev/test sides, would differ from `tablerag eval`'s"
        )
    harness = load_wtq_examples(questions)
    by_id = {q.id: q for q in load_wtq(questions, tables_root)}
    return [by_id[e.id] for e in split_examples(harness, split, None, seed, exclude=exclude)]


def wtq_sample(
    questions: Path,
    tables_root: Path,
    split: Split,
    n: int,
    seed: int,
    *,
    exclude: Iterable[str] = (),
) -> list[QAExample]:
    """The first ``n`` questions of :func:`wtq_side`: ``tablerag eval``'s sample when nothing
    is excluded.

    Raises:
        SystemExit: The side holds fewer than ``n`` questions after exclusions.
    """
    side = wtq_side(questions, tables_root, split, seed, exclude=exclude)
    if n > len(side):
        raise SystemExit(f"the {split} split holds only {len(side)} questions, not {n}")
    return side[:n]


def pin_sample(traces: Path, sample: Sequence[QAExample], split: Split) -> None:
    """Pin a run's sample beside its traces (``NAME.sample.json``), or check a rerun's.

    A rerun resumes its traces only for the very questions they were started
    with: not after a change of ``--split``, ``--n`` or ``--seed``, and not the
    traces of a run from before the bench used the harness's split.

    Raises:
        SystemExit: The traces belong to another sample.
    """
    pinned = traces.with_name(f"{traces.stem}.sample.json")
    ids = [ex.id for ex in sample]
    if pinned.exists():
        data = json.loads(pinned.read_text(encoding="utf-8"))
        if (data.get("split_rule"), data.get("split"), data.get("question_ids")) != (
            SPLIT_RULE,
            split,
            ids,
        ):
            raise SystemExit(
                f"{traces.name} holds the records of another sample ({pinned.name}): pass "
                "another --name, or --fresh to start this one over"
            )
        return
    if traces.exists() and traces.stat().st_size:
        raise SystemExit(
            f"{traces.name} holds records sampled before this bench used the harness's "
            "split (random training questions): pass another --name, or --fresh to start over"
        )
    record = {"question_ids": ids, "split": split, "split_rule": SPLIT_RULE}
    pinned.parent.mkdir(parents=True, exist_ok=True)
    pinned.write_text(json.dumps(record), encoding="utf-8")


def side_of(example: QAExample, tables_root: Path) -> Split:
    """The split side of one question (for checks and reports)."""
    table_id = example.table_path.resolve().relative_to(Path(tables_root).resolve()).as_posix()
    return split_of(table_id)


def open_run(
    out_dir: Path, name: str, sample: Sequence[QAExample], split: Split, *, fresh: bool, force: bool
) -> tuple[Path, Path]:
    """The run's traces (``NAME.jsonl``, its sample pinned) and summary path (``NAME.json``).

    ``fresh`` deletes earlier traces and the pinned sample first; the summary path
    never overwrites a saved result unless ``force`` (:func:`_results.result_path`).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    traces = out_dir / f"{name}.jsonl"
    out = result_path(out_dir / f"{name}.json", force=force)
    if fresh:
        for old in (traces, traces.with_name(f"{name}.sample.json")):
            old.unlink(missing_ok=True)
    pin_sample(traces, sample, split)
    return traces, out
