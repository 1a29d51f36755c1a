"""OTT-QA table dicts -> Table: text kept, links kept aside, bad tables rejected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tablerag_agents.errors import TableLoadError
from tablerag_agents.tables.cleaning import TableLoadWarning
from tablerag_agents.tables.ottqa import load_ottqa_corpus, ottqa_table

UID = "List_of_bus_transit_systems_in_the_United_States_16"


def _sample(test_data: Path) -> dict:
    return json.loads((test_data / "ottqa_sample.json").read_text(encoding="utf-8"))


def test_real_table_converts_with_links(test_data: Path) -> None:
    table = ottqa_table(_sample(test_data)[UID])
    assert table.id == UID
    assert table.caption == "List of bus transit systems in the United States"
    assert list(table.df.columns) == ["System", "Locale", "Major city ( s )"]
    assert table.df.shape == (4, 3)
    assert table.df.iloc[2, 0] == "Topeka Transit"
    assert table.metadata["section_title"] == "Kansas"
    assert table.metadata["links"][0] == [0, 0, ["/wiki/Johnson_County_Transit"]]
    # Cells without links are not listed: (2, 2) "Topeka" has none.
    assert [2, 2] not in [entry[:2] for entry in table.metadata["links"]]
    assert len(table.metadata["links"]) == 10
    json.dumps(table.metadata)  # must be JSON-serialisable


def test_ragged_rows_empty_and_duplicate_headers() -> None:
    d = {
        "uid": "t1",
        "title": "T",
        "header": [["Name", []], ["", []], ["Name", ["/wiki/Name"]]],
        "data": [
            [["a", []], ["b", []]],
            [["c", []], ["d", []], ["e", []], ["extra", []]],
        ],
    }
    table = ottqa_table(d)
    assert list(table.df.columns) == ["Name", "column_2", "Name_2"]
    assert table.df.values.tolist() == [["a", "b", ""], ["c", "d", "e"]]
    assert table.metadata["header_links"] == [[2, ["/wiki/Name"]]]


@pytest.mark.parametrize(
    ("d", "message"),
    [
        ({"uid": "x", "header": [["a", []]], "data": []}, "table has no rows"),
        ({"uid": "x", "header": [], "data": [[["1", []]]]}, "has no header"),
        ({"header": [["a", []]], "data": [[["1", []]]]}, "no 'uid'"),
        ({"uid": "x", "header": [["a", []]], "data": [[[1, 2, 3]]]}, "not \\[text, \\[links\\]\\]"),
    ],
)
def test_bad_tables_raise(d: dict, message: str) -> None:
    with pytest.raises(TableLoadError, match=message):
        ottqa_table(d)


def test_corpus_skips_bad_tables_with_one_warning(tmp_path: Path, test_data: Path) -> None:
    corpus = _sample(test_data)
    corpus["broken"] = {"uid": "broken", "header": [["a", []]], "data": []}
    path = tmp_path / "tables.json"
    path.write_text(json.dumps(corpus), encoding="utf-8")
    with pytest.warns(TableLoadWarning, match="skipped 1 table"):
        tables = load_ottqa_corpus(path)
    assert [t.id for t in tables] == [UID]
    assert tables[0].metadata["source"] == str(path)


def test_corpus_bad_files(tmp_path: Path) -> None:
    with pytest.raises(TableLoadError, match="no such file"):
        load_ottqa_corpus(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(TableLoadError, match="not valid JSON"):
        load_ottqa_corpus(bad)
    scalar = tmp_path / "scalar.json"
    scalar.write_text("3", encoding="utf-8")
    with pytest.raises(TableLoadError, match="expected a JSON object"):
        load_ottqa_corpus(scalar)


@pytest.mark.data
def test_shared_corpus_loads(shared_data: Path) -> None:
    tables = load_ottqa_corpus(shared_data / "ottqa" / "tables.json", limit=500)
    assert len(tables) == 500
    assert all(t.n_rows > 0 and t.df.columns.is_unique for t in tables)
    assert all(t.caption for t in tables)
