"""WTQ loader, table reader, sampler, and metrics."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablerag_agents.errors import TableLoadError
from tablerag_agents.evaluation.datasets import (
    load_wtq,
    parse_wtq_answers,
    read_wtq_table,
)
from tablerag_agents.evaluation.metrics import RunRecord, accuracy, exact_match, summarize


def _mini_wtq(tmp_path: Path) -> Path:
    (tmp_path / "csv").mkdir()
    (tmp_path / "csv" / "t.csv").write_text(
        '"Year","Team"\n"2001","A \\"B\\" C"\n"2002","D, E"\n', encoding="utf-8"
    )
    tsv = tmp_path / "q.tsv"
    tsv.write_text(
        "id\tutterance\tcontext\ttargetValue\n"
        'q-1\twhich team in 2001?\tcsv/t.csv\tA "B" C\n'
        "q-2\tall teams?\tcsv/t.csv\tA|D, E\n"
        "q-3\tpipe?\tcsv/t.csv\tx\\py\n",
        encoding="utf-8",
    )
    return tsv


def test_load_wtq_and_read_table(tmp_path: Path) -> None:
    examples = load_wtq(_mini_wtq(tmp_path))
    assert [e.id for e in examples] == ["q-1", "q-2", "q-3"]
    assert examples[0].answers == ['A "B" C']
    assert examples[1].answers == ["A", "D, E"]
    assert examples[2].answers == ["x|y"]
    assert examples[0].table_path == (tmp_path / "csv" / "t.csv").resolve()
    df = read_wtq_table(examples[0].table_path)
    assert list(df.columns) == ["Year", "Team"]
    assert df["Team"].tolist() == ['A "B" C', "D, E"]
    assert df["Year"].tolist() == ["2001", "2002"]


def test_read_wtq_table_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TableLoadError, match="nope.csv"):
        read_wtq_table(tmp_path / "nope.csv")


def test_load_wtq_rejects_other_tsv(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\n1\t2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="utterance"):
        load_wtq(bad)


def test_parse_wtq_answers_escapes() -> None:
    assert parse_wtq_answers("a\\nb|c\\\\d") == ["a\nb", "c\\d"]


@pytest.mark.data
def test_real_wtq_loads(shared_data: Path) -> None:
    examples = load_wtq(shared_data / "wtq" / "training.tsv")
    assert len(examples) == 14152
    first = examples[0]
    assert first.id == "nt-0" and first.answers == ["2004"]
    df = read_wtq_table(first.table_path)
    assert "Year" in df.columns and "2004" in df["Year"].tolist()
    assert sum(len(e.answers) > 1 for e in examples) > 100


def test_metrics() -> None:
    assert exact_match("1,234", ["1234"])
    assert not exact_match(None, ["1"])
    assert not exact_match([], ["1"])
    assert accuracy(["1", "x", ["a", "b"]], [["1"], ["y"], ["b", "a"]]) == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        accuracy(["1"], [])
    s = summarize(
        [
            RunRecord(True, False, 2, 100, 10, 1.0),
            RunRecord(False, True, 4, 300, 30, 3.0),
        ]
    )
    assert s.n == 2 and s.accuracy == 0.5 and s.exception_rate == 0.5
    assert s.mean_iterations == 3 and s.mean_input_tokens == 200 and s.seconds_per_question == 2.0
    assert s.as_dict()["mean_output_tokens"] == 20
    assert summarize([]).n == 0
