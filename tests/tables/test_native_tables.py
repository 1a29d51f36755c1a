"""Dataset-native readers: WTQ (backslash escapes, multi-line headers) and TabFact ('#')."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tablerag_agents.tables.native import load_tabfact_table, load_wtq_table


def test_wtq_fixture(test_data: Path) -> None:
    t = load_wtq_table(test_data / "wtq_200_0.csv")
    assert list(t.df.columns) == [
        "Year",
        "Title",
        "Chart-Positions UK",
        "Chart-Positions US",
        "Chart-Positions NL",
        "Comments",
    ]
    assert t.df["Year"].tolist()[:3] == [1969, 1971, 1972]
    assert t.df.loc[1, "Comments"] == "1976 (UK)"


def test_wtq_backslash_escapes(test_data: Path) -> None:
    t = load_wtq_table(test_data / "wtq_203_128.csv")
    assert t.df["glyph"].tolist() == ['"', "\\"]
    assert t.df["C string"].tolist() == ['\\"', "\\\\"]


def test_tabfact_fixture(test_data: Path) -> None:
    t = load_tabfact_table(test_data / "tabfact_1-10236830-6.html.csv", caption="nika award")
    assert t.id == "tabfact_1-10236830-6.html.csv" and t.caption == "nika award"
    assert list(t.df.columns) == ["nomination", "actors name", "film name", "director", "country"]
    assert t.df.loc[0, "actors name"] == "piotr adamczyk"


@pytest.mark.data
def test_shared_wtq_and_tabfact_samples_load(shared_data: Path) -> None:
    rng = random.Random(0)
    wtq = sorted((shared_data / "wtq" / "csv").rglob("*.csv"))
    for path in rng.sample(wtq, 100):
        t = load_wtq_table(path)
        assert t.n_rows > 0 and t.df.columns.is_unique
        assert t.id == f"{path.parent.name}/{path.stem}"
    tabfact = sorted((shared_data / "tabfact" / "all_csv").glob("*.csv"))
    for path in rng.sample(tabfact, 100):
        t = load_tabfact_table(path)
        assert t.n_cols >= 2 and t.n_rows > 0
