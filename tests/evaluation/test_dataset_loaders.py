"""Benchmark loaders on tiny native-format fixtures and on slices of the real data."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from tablerag_agents.errors import TableLoadError
from tablerag_agents.evaluation.loaders import (
    DATASETS,
    load_dataset,
    load_fetaqa,
    load_jsonl,
    load_ottqa,
    load_ottqa_tables,
    load_tabfact,
    load_wtq_examples,
    rows_to_table,
)

FIXTURES = Path(__file__).resolve().parent / "data"


def _real(shared_data: Path, name: str) -> Path:
    folder = shared_data / name
    if not folder.is_dir():
        pytest.skip(f"{folder} not found")
    return folder


# ------------------------------------------------------------------ fixtures: WTQ


def test_wtq_fixture() -> None:
    examples = load_wtq_examples(FIXTURES / "wtq" / "training.tsv")
    by_id = {e.id: e for e in examples}
    assert sorted(by_id) == ["nt-0", "nt-1283", "nt-3460", "nt-5847", "nt-9"]
    ex = by_id["nt-9"]
    assert (ex.dataset, ex.task) == ("wtq", "qa")
    assert ex.answers == ["Siim Ennemuist", "Andri Aganits"]
    assert ex.table_id == "csv/203-csv/116.csv"
    assert by_id["nt-5847"].answers == ["3,558"]
    (table,) = by_id["nt-0"].load_tables()
    assert table.id == "csv/204-csv/590.csv"
    assert table.df.shape == (10, 7)
    assert table.df.loc[0, "Year"] == "2001"  # strings, as in the file
    assert by_id["nt-0"].load_tables()[0] is not table  # a fresh table per call


def test_wtq_upstream_layout_and_explicit_root(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "wtq" / "csv", tmp_path / "csv")
    (tmp_path / "data").mkdir()
    shutil.copy(FIXTURES / "wtq" / "training.tsv", tmp_path / "data" / "other.tsv")
    found = load_wtq_examples(tmp_path / "data" / "other.tsv")  # tables one folder up
    given = load_wtq_examples(tmp_path / "data" / "other.tsv", tables_root=tmp_path)
    assert [e.table_id for e in found] == [e.table_id for e in given]
    assert found[0].table_id.startswith("csv/")
    assert found[0].load_tables()[0].n_rows > 0


def test_wtq_missing_files(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nope.tsv"):
        load_wtq_examples(tmp_path / "nope.tsv")
    tsv = tmp_path / "q.tsv"
    tsv.write_text("id\tutterance\tcontext\ttargetValue\nq\tx?\tcsv/1.csv\t1\n", encoding="utf-8")
    with pytest.raises(FileNotFoundError, match="1.csv"):
        load_wtq_examples(tsv)


# -------------------------------------------------------------- fixtures: TabFact


def test_tabfact_fixture() -> None:
    folder = FIXTURES / "tabfact"
    examples = load_tabfact(folder / "val_examples.json", folder / "all_csv")
    assert len(examples) == 7
    ex = examples[1]
    assert ex.id == "2-1856192-2.html.csv#1"
    assert (ex.dataset, ex.task, ex.table_id) == ("tabfact", "fact", "2-1856192-2.html.csv")
    assert ex.question == "there be 2 silver that rank number 1"
    assert ex.answers == ["0"]
    assert examples[0].answers == ["1"]
    assert ex.caption == "baseball at the summer olympics"
    (table,) = ex.load_tables()
    assert table.id == "2-1856192-2.html.csv"
    assert table.caption == ex.caption
    assert list(table.df.columns) == ["rank", "gold", "silver", "bronze", "total"]
    assert table.df["gold"].tolist() == ["6", "2", "1", "0", "0"]


def test_tabfact_errors(tmp_path: Path) -> None:
    folder = FIXTURES / "tabfact"
    with pytest.raises(FileNotFoundError, match="all_csv_nope"):
        load_tabfact(folder / "val_examples.json", tmp_path / "all_csv_nope")
    (tmp_path / "all_csv").mkdir()
    with pytest.raises(FileNotFoundError, match="2-1856192-2.html.csv"):
        load_tabfact(folder / "val_examples.json", tmp_path / "all_csv")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"t.csv": [["a", "b"], [1], "cap"]}), encoding="utf-8")
    with pytest.raises(ValueError, match="2 statements and 1 labels"):
        load_tabfact(bad, tmp_path / "all_csv")


# --------------------------------------------------------------- fixtures: OTT-QA


def test_ottqa_fixture() -> None:
    folder = FIXTURES / "ottqa"
    examples = load_ottqa(folder / "tables.json", folder / "dev_questions.json")
    by_id = {e.id: e for e in examples}
    ex = by_id["2a80a460979b9e45"]
    assert (ex.dataset, ex.task) == ("ottqa", "qa")
    assert ex.answers == ["Antal Kovács"]
    assert ex.table_id == "2001_World_Judo_Championships_8"
    (table,) = ex.load_tables()
    assert table.id == ex.table_id
    assert table.caption == "2001 World Judo Championships"
    assert table.metadata["section_title"]
    assert by_id["ae723bdaccec45e4"].load_tables()[0].id == "Christina_Cole_0"

    corpus = load_ottqa_tables(folder / "tables.json")
    assert sorted(t.id for t in corpus) == [
        "1997_European_Judo_Championships_9",
        "2001_World_Judo_Championships_8",
        "Christina_Cole_0",
    ]


def test_ottqa_errors(tmp_path: Path) -> None:
    folder = FIXTURES / "ottqa"
    with pytest.raises(FileNotFoundError, match="tables_nope.json"):
        load_ottqa(tmp_path / "tables_nope.json", folder / "dev_questions.json")
    bad = tmp_path / "q.json"
    bad.write_text(json.dumps([{"question_id": "x", "question": "q?"}]), encoding="utf-8")
    with pytest.raises(ValueError, match=r"question 0 lacks \['table_id', 'answer-text'\]"):
        load_ottqa(folder / "tables.json", bad)
    bad.write_text(
        json.dumps([{"question_id": "x", "question": "q", "table_id": "No_0", "answer-text": "a"}]),
        encoding="utf-8",
    )
    (ex,) = load_ottqa(folder / "tables.json", bad)  # the tables file is read lazily
    with pytest.raises(TableLoadError, match="No_0"):
        ex.load_tables()


# --------------------------------------------------------------- fixtures: FeTaQA


def test_fetaqa_fixture() -> None:
    examples = load_fetaqa(FIXTURES / "fetaqa" / "fetaQA-v1_dev.jsonl")
    assert len(examples) == 2
    ex = examples[0]
    assert (ex.id, ex.dataset, ex.task) == ("873", "fetaqa", "freeform")
    assert ex.caption == "Noriko Higuchi"
    assert ex.meta["section_title"] == "International competitions"
    assert ex.meta["highlighted_cell_ids"][0] == [1, 0]
    assert len(ex.answers) == 1 and ex.answers[0].startswith("Noriko Higuchi")
    assert ex.table_id == "totto_source/dev_json/example-872.json"
    (table,) = ex.load_tables()
    assert list(table.df.columns) == ["Year", "Competition", "Venue", "Position", "Event", "Notes"]
    assert table.df.iloc[1].tolist()[:2] == ["2011", "Asian Marathon Championships"]
    assert table.caption == "Noriko Higuchi"
    assert table.metadata["section_title"] == "International competitions"


def test_fetaqa_bad_line_is_named(tmp_path: Path) -> None:
    lines = (FIXTURES / "fetaqa" / "fetaQA-v1_dev.jsonl").read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "f.jsonl"
    bad.write_text(lines[0] + "\n" + '{"feta_id": 1, "question": "q"}\n', encoding="utf-8")
    with pytest.raises(
        ValueError, match=r"f\.jsonl:2: missing field\(s\) \['answer', 'table_array'\]"
    ):
        load_fetaqa(bad)


# ---------------------------------------------------------------- fixtures: JSONL


def test_jsonl_seed002_fixture() -> None:
    examples = load_jsonl(FIXTURES / "jsonl" / "seed002.jsonl")
    assert [e.id for e in examples] == ["q1", "q2", "4"]  # the blank line 3 is skipped
    q1, q2, q4 = examples
    assert (q1.dataset, q1.task, q1.answers, q1.table_id) == ("jsonl", "qa", ["Lyon"], "cities")
    assert q1.caption == "cities"
    assert q2.answers == ["Lyon", "Porto"]
    assert q4.answers == ["2"] and q4.table_id == "4" and q4.caption == ""
    (table,) = q1.load_tables()
    assert table.id == "cities"
    assert table.df.to_dict("list") == {
        "city": ["Lyon", "Porto"],
        "country": ["France", "Portugal"],
        "population": ["522250", ""],
    }
    (ragged,) = q4.load_tables()
    assert list(ragged.df.columns) == ["team", "column_2", "team_2"]
    assert ragged.df.values.tolist() == [["A", "1", "x"], ["B", "", ""]]


def test_jsonl_fact_task(tmp_path: Path) -> None:
    rows = [["a", "b"], ["1", "2"]]
    path = tmp_path / "f.jsonl"
    lines = [
        {"table_text": rows, "question": "s1", "label": 1, "id": "a"},
        {"table_text": rows, "question": "s2", "label": "refuted", "id": "b"},
        {"table_text": rows, "question": "s3", "label": [True], "id": "c"},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    examples = load_jsonl(path, task="fact", dataset="mytabfact")
    assert [e.answers for e in examples] == [["1"], ["0"], ["1"]]
    assert {e.dataset for e in examples} == {"mytabfact"}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", r"x\.jsonl:2: not valid JSON"),
        ('["a"]', r"x\.jsonl:2: expected a JSON object"),
        ('{"question": "q", "label": "a"}', r"x\.jsonl:2: missing field\(s\) \['table_text'\]"),
        (
            '{"table_text": "a,b", "question": "q", "label": "a"}',
            r"x\.jsonl:2: the table must be a list of rows",
        ),
        (
            '{"table_text": [["a"]], "question": "q", "label": "a"}',
            r"x\.jsonl:2: the table needs a header row and at least one data row",
        ),
        (
            '{"table_text": [["a"], ["1"]], "question": "", "label": "a"}',
            r"x\.jsonl:2: 'question' must be a non-empty string",
        ),
        (
            '{"table_text": [["a"], ["1"]], "question": "q", "label": []}',
            r"x\.jsonl:2: 'label' is an empty list",
        ),
        (
            '{"table_text": [["a"], ["1"]], "question": "q", "label": {"x": 1}}',
            r"x\.jsonl:2: 'label' items must be strings or numbers",
        ),
        (
            '{"table_text": [["a"], ["1"]], "question": "q", "label": "a", "id": "ok"}',
            r"x\.jsonl:2: duplicate id 'ok' \(first on line 1\)",
        ),
    ],
)
def test_jsonl_bad_lines_are_named(tmp_path: Path, line: str, message: str) -> None:
    good = '{"table_text": [["a"], ["1"]], "question": "q", "label": "1", "id": "ok"}'
    path = tmp_path / "x.jsonl"
    path.write_text(good + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        load_jsonl(path)


def test_jsonl_fact_label_must_be_a_verdict(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"table_text": [["a"], ["1"]], "question": "q", "label": "maybe"}\n')
    with pytest.raises(ValueError, match=r"x\.jsonl:1: 'label' 'maybe' is not a true/false"):
        load_jsonl(path, task="fact")


def test_rows_to_table_needs_data() -> None:
    with pytest.raises(ValueError, match="header row and at least one data row"):
        rows_to_table([["a", "b"]], table_id="t")


# ------------------------------------------------------------------- registry


def test_registry_loads_fixture_folders_and_files() -> None:
    assert sorted(DATASETS) == ["fetaqa", "files", "jsonl", "ottqa", "tabfact", "wtq"]
    counts = {
        "wtq": 5,
        "tabfact": 7,
        "ottqa": 3,
        "fetaqa": 2,
    }
    for name, n in counts.items():
        examples = load_dataset(name, FIXTURES / name)
        assert len(examples) == n, name
        assert {e.task for e in examples} == {DATASETS[name].task}
    assert len(load_dataset("jsonl", FIXTURES / "jsonl" / "seed002.jsonl")) == 3
    # a questions file instead of the folder (other splits in the same format)
    assert len(load_dataset("wtq", FIXTURES / "wtq" / "training.tsv")) == 5
    assert len(load_dataset("tabfact", FIXTURES / "tabfact" / "val_examples.json")) == 7


def test_registry_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown dataset 'nope'; known: \\['fetaqa'"):
        load_dataset("nope", FIXTURES)
    with pytest.raises(FileNotFoundError, match="missing_dir"):
        load_dataset("wtq", tmp_path / "missing_dir")
    with pytest.raises(FileNotFoundError, match="training.tsv"):
        load_dataset("wtq", tmp_path)
    with pytest.raises(FileNotFoundError, match="fetaQA-v1_dev.jsonl"):
        load_dataset("fetaqa", tmp_path)
    with pytest.raises(FileNotFoundError, match="is a folder"):
        load_dataset("jsonl", tmp_path)
    shutil.copy(FIXTURES / "ottqa" / "dev_questions.json", tmp_path / "dev_questions.json")
    with pytest.raises(FileNotFoundError, match="tables.json"):
        load_dataset("ottqa", tmp_path)
    shutil.copy(FIXTURES / "tabfact" / "val_examples.json", tmp_path / "val_examples.json")
    with pytest.raises(FileNotFoundError, match="all_csv"):
        load_dataset("tabfact", tmp_path)


# ------------------------------------------------------------------- real data


@pytest.mark.data
def test_real_wtq(shared_data: Path) -> None:
    examples = load_dataset("wtq", _real(shared_data, "wtq"))
    assert len(examples) == 14_152
    assert len({e.id for e in examples}) == len(examples)
    ex = examples[0]
    assert (ex.id, ex.answers, ex.table_id) == ("nt-0", ["2004"], "csv/204-csv/590.csv")
    assert ex.load_tables()[0].df.shape == (10, 7)
    assert any(len(e.answers) > 1 for e in examples[:200])


@pytest.mark.data
def test_real_tabfact(shared_data: Path) -> None:
    examples = load_dataset("tabfact", _real(shared_data, "tabfact"))
    assert len(examples) == 12_792
    assert sum(e.answers == ["1"] for e in examples) == 6_478
    assert sum(e.answers == ["0"] for e in examples) == 6_314
    assert len({e.table_id for e in examples}) == 1_696
    for ex in examples[:: len(examples) // 5]:  # a few tables parse
        (table,) = ex.load_tables()
        assert table.n_rows > 0 and table.caption == ex.caption


@pytest.mark.data
def test_real_ottqa_questions_and_one_gold_table(shared_data: Path) -> None:
    folder = _real(shared_data, "ottqa")
    examples = load_dataset("ottqa", folder)
    assert len(examples) == 1_107
    ex = next(e for e in examples if e.id == "b8c4d124476f64fe")
    assert (ex.answers, ex.table_id) == (["60"], "Budapest_0")
    started = time.perf_counter()
    (table,) = ex.load_tables()  # parses the 37 MB tables.json once (~2 s)
    first = time.perf_counter() - started
    assert table.id == "Budapest_0" and table.caption == "Budapest"
    started = time.perf_counter()
    examples[1].load_tables()
    assert time.perf_counter() - started < max(0.5, first / 4)  # cached


@pytest.mark.data
def test_real_fetaqa(shared_data: Path) -> None:
    examples = load_dataset("fetaqa", _real(shared_data, "fetaqa"))
    assert len(examples) == 1_001
    assert len({e.id for e in examples}) == 1_001
    for ex in examples[::100]:
        (table,) = ex.load_tables()
        assert table.n_rows > 0 and table.df.columns.is_unique
