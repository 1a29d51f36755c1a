"""Answer items from code values, provenance (cited cells), and table previews."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tablerag_agents.solve.answer import (
    build_provenance,
    explain,
    locate_cells,
    scalar_text,
    value_to_items,
)
from tablerag_agents.solve.base import SolverContext, python_name
from tablerag_agents.solve.preview import clean_numbers, context_block, describe_table


def test_scalar_text() -> None:
    assert scalar_text(3.0) == "3"
    assert scalar_text(np.int64(7)) == "7"
    assert scalar_text(2 / 3) == "0.666667"
    assert scalar_text(True) == "yes"
    assert scalar_text(float("nan")) == ""
    assert scalar_text(pd.Timestamp("2004-05-01")) == "2004-05-01"
    assert scalar_text(" x ") == "x"


def test_value_to_items_shapes() -> None:
    assert value_to_items(5) == ["5"]
    assert value_to_items(["a", 2.0]) == ["a", "2"]
    assert value_to_items(pd.Series([1, 2], name="n")) == ["1", "2"]
    assert value_to_items(pd.DataFrame({"a": [9]})) == ["9"]
    assert value_to_items(pd.DataFrame({"a": ["x", "y"]})) == ["x", "y"]
    assert value_to_items(pd.DataFrame({"a": [1], "b": [2]})) is None
    assert value_to_items({"count": 4}) == ["4"]
    assert value_to_items({"a": 1, "b": 2}) is None
    assert value_to_items(list(range(100))) is None
    assert value_to_items([[1, 2]]) is None
    assert value_to_items(None) is None and value_to_items("") is None


def _table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "Year": ["2001", "2002", "2003"],
            "Team": ["Lyon", "Paris", "Lyon"],
            "Pts": ["7", "12", "3"],
        }
    )


def test_locate_cells_numeric_and_text() -> None:
    df = _table()
    cells = locate_cells({"t": df}, ["lyon"])
    assert [(c.row, c.column) for c in cells] == [(0, "Team"), (2, "Team")]
    assert [(c.row, c.column) for c in locate_cells({"t": df}, ["12.0"])] == [(1, "Pts")]
    assert locate_cells({"t": df}, ["2003"], columns=["Pts"]) == []
    assert len(locate_cells({"t": df}, ["Lyon"], limit=1)) == 1


def test_provenance_from_result_rows() -> None:
    df = _table()
    cleaned = clean_numbers(df)
    value = cleaned[cleaned["Pts"] > 5][["Team", "Pts"]]
    prov = build_provenance(value, None, {"t": df})
    assert prov.method == "result_rows"
    assert {(c.row, c.column, c.value) for c in prov.cells} == {
        (0, "Team", "Lyon"),
        (0, "Pts", "7"),
        (1, "Team", "Paris"),
        (1, "Pts", "12"),
    }
    assert prov.evidence_rows[1] == {"row": 1, "Team": "Paris", "Pts": "12"}
    # A transformed copy whose values differ is not cited as rows.
    changed = value.assign(Pts=value["Pts"] * 10)
    assert build_provenance(changed, ["x"], {"t": df}).method == "none"


def test_provenance_value_match_prefers_code_columns() -> None:
    df = _table()
    prov = build_provenance(2003, ["2003"], {"t": df}, code="df['Year'].max()")
    assert [(c.row, c.column) for c in prov.cells] == [(2, "Year")]
    assert prov.method == "value_match"
    # The code named a column without the value: fall back to the whole table.
    prov = build_provenance("Paris", ["Paris"], {"t": df}, code="df['Year']")
    assert [(c.row, c.column) for c in prov.cells] == [(1, "Team")]
    assert build_provenance(99, ["99"], {"t": df}).method == "none"


def test_explain() -> None:
    prov = build_provenance("Lyon", ["Lyon"], {"t": _table()})
    assert explain("Lyon", prov) == "The answer is Lyon (table rows 0, 2)."
    assert explain("a|b", prov, "It was Lyon.") == "It was Lyon (table rows 0, 2)."
    assert explain("", prov) == "No answer could be found in the table."


def test_clean_numbers_and_describe() -> None:
    df = pd.DataFrame(
        {
            "Att": ["7,169", "—", "$1,000"],
            "Rank": ["1", "2", "T3"],
            "Pct": ["45%", "0.5", ""],
            "Empty": ["", "", ""],
        }
    )
    out = clean_numbers(df)
    assert out["Att"].tolist()[0] == 7169.0 and np.isnan(out["Att"].tolist()[1])
    assert out["Rank"].tolist() == ["1", "2", "T3"]
    assert out["Pct"].tolist()[:2] == [45.0, 0.5]
    assert out["Empty"].tolist() == ["", "", ""]
    assert clean_numbers(pd.DataFrame({"y": ["2001", "2002"]}))["y"].dtype == np.int64
    text = describe_table(clean_numbers(df), name="df", head_rows=2)
    assert "`df` has 3 rows and 4 columns." in text
    assert "'Att' (float), 'Rank' (str)" in text and "First 2 rows" in text
    assert "| 7169 |" in text
    sql = describe_table(df, name="t", quote='"', head_rows=5)
    assert '"Att" (str)' in sql and "All rows" in sql


def test_whole_table_is_shown_when_it_fits() -> None:
    df = pd.DataFrame({"Team": [f"club {i}" for i in range(30)], "Pts": list(range(30))})
    small = describe_table(df, head_rows=8, full_table_tokens=1000)
    assert "All rows:" in small and "| club 29 | 29 |" in small
    # Over the budget (or with the option off) only the first rows are shown.
    for budget in (50, 0):
        head = describe_table(df, head_rows=8, full_table_tokens=budget)
        assert "First 8 rows" in head and "club 8 " not in head


def test_context_block_and_names() -> None:
    df = _table()
    ctx = SolverContext(question="q", tables={"main": df, "pd": df}, caption="Cup")
    tables = ctx.python_tables()
    assert list(tables) == ["df", "main", "pd_2"]
    table_text, extra = context_block(tables, ctx.extra_text(), df.head(1))
    assert "`pd_2` has 3 rows" in table_text
    assert extra.startswith("Table title: Cup\nRelevant rows:\n| row | Year |")
    assert python_name("204-csv/590") == "t_204_csv_590"
    assert python_name("x", {"x"}) == "x_2"


def test_counts_are_not_value_matched() -> None:
    from tablerag_agents.solve.answer import is_aggregate

    df = _table()
    # "3" is also a cell (Pts of row 2), but a count of 3 does not come from it.
    prov = build_provenance(3, ["3"], {"t": df}, code="len(df[df['Team'] == 'Lyon']) + 1")
    assert prov.method == "none" and prov.cells == []
    # With the rows the count was taken over, those rows are cited instead.
    rows = df[df["Team"] == "Lyon"]
    prov = build_provenance(2, ["2"], {"t": df}, code="len(x)", evidence=rows)
    assert prov.method == "result_rows" and {c.row for c in prov.cells} == {0, 2}
    assert is_aggregate("SELECT COUNT(*) FROM t") and is_aggregate("df.shape[0]")
    assert not is_aggregate("df['Avg. Attendance'].max()")
    assert not is_aggregate('SELECT MAX("Year") FROM t')


def test_result_rows_cite_original_cell_text() -> None:
    df = pd.DataFrame({"Att": ["7,169", "6,260"], "Team": ["A", "B"]})
    cleaned = clean_numbers(df)
    prov = build_provenance(cleaned[cleaned["Att"] > 7000], None, {"t": df})
    assert [(c.row, c.column, c.value) for c in prov.cells] == [
        (0, "Att", "7,169"),
        (0, "Team", "A"),
    ]
    dup = pd.DataFrame({"a": [1, 2]}, index=[0, 0])
    assert build_provenance(dup.iloc[:1], None, {"t": dup}).method == "none"
