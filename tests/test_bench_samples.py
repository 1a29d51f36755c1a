"""The bench scripts draw their WTQ questions on the evaluation harness's dev/test split."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest

from tablerag_agents.evaluation.loaders import load_wtq_examples
from tablerag_agents.evaluation.splits import split_examples, split_of

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))
import filters  # noqa: E402
import graph_wtq  # noqa: E402
import solvers_wtq  # noqa: E402
from _wtq_split import pin_sample, side_of  # noqa: E402

TABLES = 40


@pytest.fixture(scope="module")
def wtq(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A WTQ-format folder: 40 tables, 3 questions each (answers are cells, or a count)."""
    root = tmp_path_factory.mktemp("wtq")
    lines = ["id\tutterance\tcontext\ttargetValue"]
    for t in range(TABLES):
        path = root / "csv" / "200-csv" / f"{t}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"Name,Team\nann{t},red{t}\nbob{t},blue{t}\n")
        context = f"csv/200-csv/{t}.csv"
        lines += [
            f"nt-{3 * t}\twho played for red{t}?\t{context}\tann{t}",
            f"nt-{3 * t + 1}\twhich team was bob{t} in?\t{context}\tblue{t}",
            f"nt-{3 * t + 2}\thow many players?\t{context}\t17",  # no cell holds 17
        ]
    (root / "training.tsv").write_text("\n".join(lines) + "\n")
    return root


def _sides(wtq: Path) -> dict[str, str]:
    return {e.id: split_of(e.table_id) for e in load_wtq_examples(wtq / "training.tsv")}


def test_the_fixture_has_both_sides(wtq: Path) -> None:
    assert set(_sides(wtq).values()) == {"dev", "test"}


@pytest.mark.parametrize("split", ["dev", "test"])
def test_graph_wtq_samples_the_harness_split(wtq: Path, tmp_path: Path, split: str) -> None:
    frozen = tmp_path / "run.sample.json"
    sample, excluded = graph_wtq.choose_sample(
        wtq / "training.tsv", wtq, split, 10, 3, frozen=frozen, exclude=set()
    )
    sides = _sides(wtq)
    assert {sides[e.id] for e in sample} == {split} and excluded == 0
    assert {side_of(e, wtq) for e in sample} == {split}
    harness = split_examples(load_wtq_examples(wtq / "training.tsv"), split, 10, 3)
    assert [e.id for e in sample] == [e.id for e in harness]  # tablerag eval's own sample
    again, _ = graph_wtq.choose_sample(
        wtq / "training.tsv", wtq, split, 10, 99, frozen=frozen, exclude=set()
    )
    assert again == sample  # a resumed run answers the frozen sample


def test_graph_wtq_refuses_a_sample_frozen_by_the_old_random_rule(
    wtq: Path, tmp_path: Path
) -> None:
    frozen = tmp_path / "old.sample.json"
    frozen.write_text(json.dumps({"question_ids": ["nt-0"], "excluded": 0}))
    with pytest.raises(SystemExit, match="another rule"):
        graph_wtq.choose_sample(
            wtq / "training.tsv", wtq, "test", 1, 0, frozen=frozen, exclude=set()
        )


@pytest.mark.parametrize("split", ["dev", "test"])
def test_solvers_wtq_samples_the_harness_split(wtq: Path, split: str) -> None:
    first = solvers_wtq.choose_sample(wtq / "training.tsv", wtq, split, 12, 0)
    second = solvers_wtq.choose_sample(wtq / "training.tsv", wtq, split, 12, 2, exclude_seed=0)
    sides = _sides(wtq)
    assert {sides[e.id] for e in first + second} == {split}
    assert len(first) == len(second) == 12 and not {e.id for e in first} & {e.id for e in second}


@pytest.mark.parametrize("split", ["dev", "test"])
def test_filters_samples_answer_cells_on_the_harness_split(wtq: Path, split: str) -> None:
    args = argparse.Namespace(
        questions=wtq / "training.tsv",
        tables_root=wtq,
        split=split,
        n=6,
        seed=7,
        limit=None,
        exclude_seeds="0",
        exclude_n=4,
        exclude_filter_seeds="1",
    )
    sample, excluded, _ = filters.choose_sample(args)
    sides = _sides(wtq)
    assert len(sample) == 6 and {sides[e.id] for e in sample} == {split}
    assert all(int(e.id[3:]) % 3 != 2 for e in sample)  # the answer is a cell
    assert not excluded & {e.id for e in sample}
    assert {sides[i] for i in excluded} == {split}  # the excluded samples are drawn there too


def test_traces_resume_only_for_their_own_sample(wtq: Path, tmp_path: Path) -> None:
    sample = solvers_wtq.choose_sample(wtq / "training.tsv", wtq, "dev", 5, 0)
    traces = tmp_path / "run.jsonl"
    pin_sample(traces, sample, "dev")  # a new run pins its sample
    traces.write_text('{"id": "nt-0"}\n')
    pin_sample(traces, sample, "dev")  # the same questions: resumes
    other = solvers_wtq.choose_sample(wtq / "training.tsv", wtq, "dev", 5, 1)
    with pytest.raises(SystemExit, match="another sample"):
        pin_sample(traces, other, "dev")
    old = tmp_path / "solvers_wtq.jsonl"  # a run from before the harness's split
    old.write_text('{"id": "nt-0"}\n')
    with pytest.raises(SystemExit, match="random training questions"):
        pin_sample(old, sample, "dev")


def test_question_class_lists_the_first_ids_of_a_class_in_split_order(wtq: Path) -> None:
    import question_class

    lines = (wtq / "training.tsv").read_text().splitlines()
    context = "csv/200-csv/0.csv"
    lines += [
        f"nt-900\twas ann0 or bob0 on red0?\t{context}\tann0",
        f"nt-901\tdid ann0 play for red0?\t{context}\tyes",
        f"nt-902\tis bob0 more or less than 2 players?\t{context}\tless",
    ]
    folder = wtq.parent / "wtq_choice"
    folder.mkdir()
    (folder / "training.tsv").write_text("\n".join(lines) + "\n")
    (folder / "csv").symlink_to(wtq / "csv")
    side = split_of(context)
    order = [
        e.id for e in split_examples(load_wtq_examples(folder / "training.tsv"), side, None, 3)
    ]
    choice = question_class.class_ids("wtq", folder, side, "choice", 5, 3)
    assert choice == [i for i in order if i in {"nt-900", "nt-902"}]
    assert question_class.class_ids("wtq", folder, side, "yes_no", 5, 3) == ["nt-901"]
    assert question_class.class_ids("wtq", folder, side, "choice", 1, 3) == choice[:1]
