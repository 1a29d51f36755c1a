"""Cell database: budget B, frequency truncation, allocation across columns."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from tablerag_agents.table_index.cells import CellEntry, build_cell_db, fair_allocation


def _repeat(counts: dict[str, int]) -> list[str]:
    return [v for v, n in counts.items() for _ in range(n)]


def test_small_table_keeps_every_distinct_pair() -> None:
    df = pd.DataFrame({"city": ["Paris", "Lyon", "Paris", None], "kind": ["a", "a", "b", " "]})
    db = build_cell_db(df, budget=100)
    assert db.entries == [
        CellEntry("city", "Paris", 2),
        CellEntry("city", "Lyon", 1),
        CellEntry("kind", "a", 2),
        CellEntry("kind", "b", 1),
    ]
    assert db.n_distinct == 4 and not db.truncated


def test_budget_is_exact_and_most_frequent_values_are_kept() -> None:
    # Column "big": value v{i} appears 1000 - i times, so the order is known.
    big = _repeat({f"v{i}": 100 - i for i in range(100)})
    df = pd.DataFrame({"big": big})
    db = build_cell_db(df, budget=10)
    assert len(db.entries) == 10
    assert [e.value for e in db.entries] == [f"v{i}" for i in range(10)]
    assert [e.count for e in db.entries] == list(range(100, 90, -1))
    assert db.truncated and db.n_distinct == 100
    assert build_cell_db(df, budget=0).entries == []


def test_fair_allocation_water_fills() -> None:
    assert fair_allocation({"a": 3, "b": 100, "c": 100}, 50) == {"a": 3, "b": 24, "c": 23}
    # The remainder goes to the column whose next value is more frequent.
    nxt = {"a": [1, 1, 1], "b": [5] * 100, "c": [9] * 30 + [1] * 70}
    assert fair_allocation({"a": 3, "b": 100, "c": 100}, 50, nxt) == {"a": 3, "b": 23, "c": 24}
    # Fewer slots than columns: the most frequent leftovers win.
    assert fair_allocation({"a": 3, "b": 100, "c": 100}, 2, nxt) == {"a": 0, "b": 1, "c": 1}
    assert fair_allocation({"a": 3, "b": 4}, 100) == {"a": 3, "b": 4}
    with pytest.raises(ValueError, match="budget must be >= 0"):
        fair_allocation({"a": 1}, -1)


def test_fair_allocation_protects_categorical_columns() -> None:
    n = 3000
    df = pd.DataFrame(
        {
            "user": [f"user{i}" for i in range(n)],  # 3000 unique, count 1 each
            "country": (["France", "Spain", "Italy"] * n)[:n],
            "status": (["open", "closed"] * n)[:n],
        }
    )
    db = build_cell_db(df, budget=100)
    assert len(db.entries) == 100
    assert db.allocation == {"user": 95, "country": 3, "status": 2}
    assert {e.value for e in db.entries if e.column == "country"} == {"France", "Spain", "Italy"}
    # The global rule keeps the most frequent pairs table-wide: no users at all here.
    glob = build_cell_db(df, budget=5, allocation="global")
    assert glob.allocation == {"user": 0, "country": 3, "status": 2}
    with pytest.raises(ValueError, match="unknown allocation"):
        build_cell_db(df, allocation="random")  # type: ignore[arg-type]


def test_numeric_datetime_and_free_text_handling() -> None:
    n = 200
    df = pd.DataFrame(
        {
            "price": np.linspace(0.5, 100.0, n),  # 200 distinct floats: schema only
            "year": ([1999, 2000, 2001] * n)[:n],  # low-cardinality int: a category
            "when": pd.date_range("2020-01-01", periods=n, freq="D"),
            "notes": ["a very long remark " * 10 + str(i) for i in range(n)],
            "tag": (["x", "y"] * n)[:n],
        }
    )
    db = build_cell_db(df, budget=1000)
    assert set(db.skipped) == {"price", "when", "notes"}
    assert "float column with 200 distinct values" in db.skipped["price"]
    assert "free text" in db.skipped["notes"]
    assert {e.value for e in db.entries if e.column == "year"} == {"1999", "2000", "2001"}
    every = build_cell_db(df, budget=1000, include_numeric=True)
    assert every.allocation["price"] == 200 and every.allocation["when"] == 200
    assert CellEntry("when", "2020-01-01", 1) in every.entries
    assert build_cell_db(df, categorical_limit=2).allocation.get("year") is None


def test_million_cells_is_fast() -> None:
    rng = np.random.default_rng(0)
    rows = 100_000
    df = pd.DataFrame(
        {
            f"cat{i}": rng.choice([f"c{i}_{j}" for j in range(10 ** (i % 4 + 1))], rows)
            for i in range(8)
        }
    )
    df["num"] = rng.random(rows)
    df["id"] = np.arange(rows)
    start = time.perf_counter()
    db = build_cell_db(df, budget=10_000)
    elapsed = time.perf_counter() - start
    assert len(db.entries) == 10_000
    assert elapsed < 5.0, elapsed
