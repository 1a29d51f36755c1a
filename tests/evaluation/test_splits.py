"""Dev/test splits: disjoint by construction, stable seeded samples."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablerag_agents.evaluation.loaders import load_dataset
from tablerag_agents.evaluation.splits import pick_examples, read_ids, split_examples, split_of
from tablerag_agents.evaluation.types import EvalExample


def _examples(n: int, per_table: int = 3) -> list[EvalExample]:
    return [
        EvalExample(
            id=f"q-{i}",
            dataset="toy",
            task="qa",
            question=f"question {i}?",
            answers=[str(i)],
            table_id=f"t-{i // per_table}",
            load_tables=list,
        )
        for i in range(n)
    ]


EXAMPLES = _examples(600)


@pytest.mark.parametrize("seed", [0, 1, 7])
@pytest.mark.parametrize("n", [1, 50, 200])
def test_dev_and_test_never_overlap(seed: int, n: int) -> None:
    dev = {e.id for e in split_examples(EXAMPLES, "dev", n, seed)}
    assert len(dev) == n
    for other_seed in (0, 1, 7):
        for other_n in (1, 50, 200):
            test = {e.id for e in split_examples(EXAMPLES, "test", other_n, other_seed)}
            assert dev.isdisjoint(test)


def test_whole_sides_partition_the_examples_and_tables() -> None:
    dev = split_examples(EXAMPLES, "dev", None)
    test = split_examples(EXAMPLES, "test", None)
    assert sorted(e.id for e in dev + test) == sorted(e.id for e in EXAMPLES)
    assert {e.table_id for e in dev}.isdisjoint({e.table_id for e in test})
    assert 0.35 < len(dev) / len(EXAMPLES) < 0.65  # about half each
    assert all(split_of(e.table_id) == "dev" for e in dev)


def test_same_arguments_same_sample_and_order() -> None:
    a = split_examples(EXAMPLES, "test", 40, seed=3)
    b = split_examples(list(reversed(EXAMPLES)), "test", 40, seed=3)  # input order is irrelevant
    assert [e.id for e in a] == [e.id for e in b]
    assert [e.id for e in a] != [e.id for e in split_examples(EXAMPLES, "test", 40, seed=4)]


def test_larger_n_extends_smaller_n() -> None:
    small = split_examples(EXAMPLES, "dev", 20, seed=5)
    big = split_examples(EXAMPLES, "dev", 60, seed=5)
    assert [e.id for e in big[:20]] == [e.id for e in small]


def test_exclude_removes_ids_without_reordering_the_rest() -> None:
    first = split_examples(EXAMPLES, "test", 30, seed=0)
    seen = [e.id for e in first[:10]]
    fresh = split_examples(EXAMPLES, "test", 20, seed=0, exclude=seen)
    assert not {e.id for e in fresh} & set(seen)
    assert [e.id for e in fresh] == [e.id for e in first[10:30]]


def test_side_does_not_depend_on_the_other_examples() -> None:
    subset = EXAMPLES[100:200]
    whole = {e.id for e in split_examples(EXAMPLES, "dev", None)}
    part = {e.id for e in split_examples(subset, "dev", None)}
    assert part == whole & {e.id for e in subset}


def test_errors() -> None:
    side = len(split_examples(EXAMPLES, "test", None))
    with pytest.raises(ValueError, match=f"asked for {side + 1} examples from the test split"):
        split_examples(EXAMPLES, "test", side + 1)
    seen = [e.id for e in split_examples(EXAMPLES, "test", 5)]
    with pytest.raises(ValueError, match=rf"holds only {side - 5} after excluding 5 id\(s\)"):
        split_examples(EXAMPLES, "test", side, exclude=seen)
    with pytest.raises(ValueError, match="split must be 'dev' or 'test'"):
        split_examples(EXAMPLES, "train", 5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n must be >= 0"):
        split_examples(EXAMPLES, "dev", -1)
    with pytest.raises(ValueError, match="'q-0' repeats"):
        split_examples(EXAMPLES + EXAMPLES[:1], "dev", 1)


def test_split_assignment_and_sample_are_pinned() -> None:
    """The rule must never change silently: these values were computed once and frozen."""
    sides = {t: split_of(t) for t in ("csv/204-csv/590.csv", "Budapest_0", "t-0", "t-2")}
    assert sides == {
        "csv/204-csv/590.csv": "dev",
        "Budapest_0": "test",
        "t-0": "dev",
        "t-2": "test",
    }
    sample = [e.id for e in split_examples(EXAMPLES, "test", 5, seed=0)]
    assert sample == ["q-241", "q-216", "q-142", "q-260", "q-531"]


@pytest.mark.data
def test_real_wtq_split(shared_data: Path) -> None:
    folder = shared_data / "wtq"
    if not folder.is_dir():
        pytest.skip(f"{folder} not found")
    examples = load_dataset("wtq", folder)
    for seed in (0, 1, 2):
        dev = split_examples(examples, "dev", 100, seed)
        test = split_examples(examples, "test", 100, seed)
        assert {e.id for e in dev}.isdisjoint({e.id for e in test})
        assert {e.table_id for e in dev}.isdisjoint({e.table_id for e in test})


def test_a_given_id_list_keeps_its_order_and_its_side() -> None:
    dev = [e.id for e in split_examples(EXAMPLES, "dev", 3)]
    picked = pick_examples(EXAMPLES, "dev", dev[::-1])
    assert [e.id for e in picked] == dev[::-1]
    test_id = split_examples(EXAMPLES, "test", 1)[0].id
    with pytest.raises(ValueError, match=rf"not on the dev side of the split: {test_id}"):
        pick_examples(EXAMPLES, "dev", [*dev, test_id])
    with pytest.raises(ValueError, match="not in the dataset: q-nope"):
        pick_examples(EXAMPLES, "dev", ["q-nope"])
    with pytest.raises(ValueError, match=f"repeats {dev[0]}"):
        pick_examples(EXAMPLES, "dev", [dev[0], dev[0]])
    with pytest.raises(ValueError, match="empty"):
        pick_examples(EXAMPLES, "dev", [])


def test_id_files_skip_blank_lines_and_comments() -> None:
    assert read_ids("# choice questions\nnt-1\n\n  nt-2  # second\n") == ["nt-1", "nt-2"]
