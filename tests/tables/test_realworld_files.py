"""Real-world spreadsheet layouts in tests/data/realworld load as clean tables."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from openpyxl import Workbook

from tablerag_agents.errors import TableLoadError
from tablerag_agents.evaluation.loaders import load_dataset
from tablerag_agents.tables.loaders import load_table, load_tables

DATA = Path(__file__).parents[1] / "data" / "realworld"


def _rows(df: pd.DataFrame, n: int = 2) -> list[list[object]]:
    return df.head(n).to_numpy().tolist()


def test_title_row_and_merged_two_row_header() -> None:
    t = load_table(DATA / "regional_sales.xlsx")
    assert list(t.df.columns) == [
        "Region",
        "Q1 / Online",
        "Q1 / Store",
        "Q2 / Online",
        "Q2 / Store",
    ]
    assert _rows(t.df) == [["North", 120, 340, 150, 310], ["South", 95, 410, 130, 390]]
    assert len(t.df) == 5
    assert t.caption == "Regional sales 2023 (units)"
    assert t.metadata["header_rows"] == 2


def test_unmerged_group_row_is_flattened() -> None:
    t = load_table(DATA / "inventory.xlsx")
    assert list(t.df.columns) == [
        "Item",
        "Stock / Warehouse",
        "Stock / Shop",
        "Price / Buy",
        "Price / Sell",
    ]
    assert _rows(t.df) == [["Kettle", 40, 12, 15.5, 29.99], ["Toaster", 25, 8, 18.0, 34.5]]
    assert pd.api.types.is_numeric_dtype(t.df["Price / Sell"])


def test_title_row_offset_table_and_spacer_columns() -> None:
    t = load_table(DATA / "budget.xlsx")
    assert list(t.df.columns) == ["Department", "Budget", "Spent", "Head"]
    assert _rows(t.df) == [
        ["Marketing", 50000, 42000, "Ana Lima"],
        ["Research", 120000, 131000, "Ben Ito"],
    ]
    assert t.caption == "Department budget 2024"


def test_csv_group_row_is_flattened() -> None:
    t = load_table(DATA / "grades.csv")
    assert list(t.df.columns) == [
        "Student",
        "Midterm / Written",
        "Midterm / Oral",
        "Final / Written",
        "Final / Oral",
    ]
    assert _rows(t.df) == [["Ana", 14, 16, 15, 17], ["Ben", 11, 12, 13, 10]]
    assert pd.api.types.is_integer_dtype(t.df["Final / Oral"])
    assert t.metadata["header_rows"] == 2


def test_plain_csv_with_a_text_first_row_is_unchanged(tmp_path: Path) -> None:
    (tmp_path / "p.csv").write_text("Name,Score,Team\nAna,3,Data\nBen,5,Web\n")
    t = load_table(tmp_path / "p.csv")
    assert list(t.df.columns) == ["Name", "Score", "Team"]
    assert t.df.to_numpy().tolist() == [["Ana", 3, "Data"], ["Ben", 5, "Web"]]
    assert "header_rows" not in t.metadata


def test_several_tables_on_one_sheet() -> None:
    tables = list(load_tables(DATA / "staff.xlsx", on_error="raise"))
    assert [t.id for t in tables] == ["staff#1", "staff#2"]
    assert [t.caption for t in tables] == ["Employees", "Projects"]
    assert list(tables[0].df.columns) == ["Employee ID", "Name", "Team", "Salary"]
    assert _rows(tables[0].df) == [[101, "Ana", "Data", 5200], [102, "Ben", "Web", 4800]]
    assert len(tables[0].df) == 5
    assert list(tables[1].df.columns) == ["Project", "Lead ID", "Budget", "Status"]
    assert _rows(tables[1].df) == [["Atlas", 103, 90000, "active"], ["Beacon", 101, 40000, "done"]]
    assert tables[1].metadata["block"] == 2 and tables[1].metadata["blocks"] == 2
    assert load_table(DATA / "staff.xlsx", block=2).df.equals(tables[1].df)
    with pytest.raises(TableLoadError, match=r"holds 2 tables: #1 \(Employees\); #2 \(Projects\)"):
        load_table(DATA / "staff.xlsx")
    with pytest.raises(TableLoadError, match="no table #3"):
        load_table(DATA / "staff.xlsx", block=3)


def test_plain_sheets_load_as_before(tmp_path: Path) -> None:
    """A one-row header, an empty column and row, a text-only body: one table, as before."""
    wb = Workbook()
    ws = wb.active
    ws.append(["Name", None, "Team", "Score"])
    ws.append(["Ana", None, "Data", 3])
    ws.append([])
    ws.append(["Ben", None, "Web", 5])
    ws.append(["Chloe", None, "Ops", 4])
    wb.save(tmp_path / "plain.xlsx")
    t = load_table(tmp_path / "plain.xlsx")
    assert list(t.df.columns) == ["Name", "Team", "Score"]
    assert t.df.to_numpy().tolist() == [["Ana", "Data", 3], ["Ben", "Web", 5], ["Chloe", "Ops", 4]]
    assert set(t.metadata) == {"source", "format", "sheet"}
    assert t.caption == "plain"
    assert [x.id for x in load_tables(tmp_path / "plain.xlsx")] == ["plain"]


def test_names_only_body_is_not_a_second_header(tmp_path: Path) -> None:
    wb = Workbook()
    ws = wb.active
    for row in (["City", "Country"], ["Lyon", "France"], ["Austin", "USA"]):
        ws.append(row)
    wb.save(tmp_path / "cities.xlsx")
    t = load_table(tmp_path / "cities.xlsx")
    assert list(t.df.columns) == ["City", "Country"]
    assert t.df.to_numpy().tolist() == [["Lyon", "France"], ["Austin", "USA"]]


def test_block_applies_to_spreadsheets_only() -> None:
    with pytest.raises(TableLoadError, match="spreadsheets only"):
        load_table(DATA / "shop_orders.csv", block=1)


# Each gold answer written by hand, re-derived here from the loaded tables.
CHECKS: dict[str, Callable[[list[pd.DataFrame]], object]] = {
    "rw01": lambda t: t[0].loc[t[0]["Q1 / Online"].idxmax(), "Region"],
    "rw02": lambda t: t[0].set_index("Region").loc["South", "Q2 / Store"],
    "rw03": lambda t: t[0]["Q1 / Store"].sum(),
    "rw04": lambda t: t[0].loc[t[0]["Q2 / Online"].idxmin(), "Region"],
    "rw05": lambda t: t[0].set_index("Region").loc["West", ["Q1 / Online", "Q1 / Store"]].sum(),
    "rw06": lambda t: t[0].loc[t[0]["Stock / Warehouse"] == 0, "Item"].item(),
    "rw07": lambda t: t[0].set_index("Item").loc["Blender", "Price / Sell"],
    "rw08": lambda t: t[0].set_index("Item").loc["Kettle", "Stock / Shop"],
    "rw09": lambda t: t[0]["Stock / Warehouse"].sum(),
    "rw10": lambda t: t[0].loc[t[0]["Price / Sell"].idxmax(), "Item"],
    "rw11": lambda t: round(
        float(t[0].set_index("Item").loc["Toaster", "Price / Sell"])
        - float(t[0].set_index("Item").loc["Toaster", "Price / Buy"]),
        2,
    ),
    "rw12": lambda t: t[0].set_index("Department").loc["Support", "Head"],
    "rw13": lambda t: int((t[0]["Spent"] > t[0]["Budget"]).sum()),
    "rw14": lambda t: t[0]["Budget"].sum(),
    "rw15": lambda t: t[0].loc[t[0]["Budget"].idxmax(), "Department"],
    "rw16": lambda t: t[0].loc[t[0]["Team"] == "Data", "Salary"].mean(),
    "rw17": lambda t: int((t[0]["Status"] == "active").sum()),
    "rw18": lambda t: t[0].loc[t[0]["Budget"].idxmax(), "Project"],
    "rw19": lambda t: (
        t[0]
        .merge(t[1], left_on="Lead ID", right_on="Employee ID")
        .set_index("Project")
        .loc["Comet", "Name"]
    ),
    "rw20": lambda t: (
        t[1]
        .merge(t[0], left_on="Lead ID", right_on="Employee ID")
        .query("Name == 'Chloe'")["Budget"]
        .sum()
    ),
    "rw21": lambda t: (
        t[0].merge(t[1], on="Customer ID").groupby("Customer")["Amount"].sum().idxmax()
    ),
    "rw22": lambda t: t[0].merge(t[1], on="Customer ID").query("City == 'Lyon'")["Amount"].sum(),
    "rw23": lambda t: t[0].loc[~t[0]["Customer ID"].isin(t[1]["Customer ID"]), "Customer"].item(),
    "rw24": lambda t: sorted(
        t[0].merge(t[1], on="Customer ID").query("Product == 'Kettle'")["Customer"]
    ),
    "rw25": lambda t: len(t[0].merge(t[1], on="Customer ID").query("City == 'Berlin'")),
    "rw26": lambda t: t[0].loc[t[0]["Final / Written"].idxmax(), "Student"],
    "rw27": lambda t: t[0].set_index("Student").loc["Ben", "Midterm / Oral"],
    "rw28": lambda t: t[0]["Final / Oral"].mean(),
}


def _items(value: object) -> list[str]:
    values = value if isinstance(value, list) else [value]
    out = []
    for v in values:
        number = float(v) if isinstance(v, int | float) or hasattr(v, "item") else None
        out.append(f"{number:g}" if number is not None else str(v))
    return out


def test_questions_parse_their_tables_load_and_answers_match() -> None:
    examples = load_dataset("files", DATA)
    assert len(examples) >= 20
    assert {e.id for e in examples} == set(CHECKS)
    joins = [e for e in examples if len(e.meta["tables"]) == 2]
    assert len(joins) >= 5
    for e in examples:
        frames = [t.df for t in e.load_tables()]
        assert _items(CHECKS[e.id](frames)) == e.answers, e.id


def test_generator_reproduces_the_committed_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_files", DATA / "make_files.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "HERE", tmp_path)
    for name in ("regional_sales", "inventory", "budget", "shop", "grades_csv", "staff_sheet"):
        getattr(module, name)()
    for made in sorted(tmp_path.iterdir()):
        for block in (1, 2) if made.name == "staff.xlsx" else (None,):
            new = load_table(made, block=block).df
            assert new.equals(load_table(DATA / made.name, block=block).df), made.name
