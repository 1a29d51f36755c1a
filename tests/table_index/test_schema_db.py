"""Schema database entries: kinds, counts, examples, ranges."""

from __future__ import annotations

import pandas as pd

from tablerag_agents.table_index.schema import SchemaEntry, build_schema


def test_schema_entries() -> None:
    df = pd.DataFrame(
        {
            "name": ["b", "a", "b", None],
            "score": [3, 1, 2, 5],
            "ratio": [0.5, None, 1.5, 2.0],
            "day": pd.to_datetime(["2021-03-01", "2020-01-05", None, "2022-12-31"]),
            "ok": [True, False, True, True],
        }
    )
    schema = build_schema(df, max_examples=2)
    by = {e.column: e for e in schema}
    assert [e.column for e in schema] == ["name", "score", "ratio", "day", "ok"]
    assert by["name"] == SchemaEntry("name", "text", 2, 1, ("b", "a"))
    assert (by["score"].dtype, by["score"].min, by["score"].max) == ("int", "1", "5")
    assert (by["ratio"].min, by["ratio"].max, by["ratio"].n_missing) == ("0.5", "2.0", 1)
    assert (by["day"].dtype, by["day"].min, by["day"].max) == (
        "datetime",
        "2020-01-05",
        "2022-12-31",
    )
    assert (
        by["ok"].dtype == "bool" and by["ok"].min is None and by["ok"].examples == ("True", "False")
    )
    assert by["score"].to_text() == "score (int): 3, 1; range 1 to 5"
    assert by["name"].to_dict() == {
        "column": "name",
        "dtype": "text",
        "n_unique": 2,
        "n_missing": 1,
        "examples": ["b", "a"],
    }


def test_long_examples_are_cut() -> None:
    entry = build_schema(pd.DataFrame({"t": ["x" * 500]}), max_value_chars=10)[0]
    assert entry.examples == ("x" * 9 + "…",)
