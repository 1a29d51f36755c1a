"""The shared renderer's compact style and the shared number parser's options."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tablerag_agents.solve.normalize import parse_number as parse_answer_number
from tablerag_agents.solve.preview import clean_numbers, markdown_rows
from tablerag_agents.tables.render import render_table
from tablerag_agents.tables.values import numbers_in_text, parse_number


def test_compact_markdown_is_the_solver_prompt_layout() -> None:
    df = pd.DataFrame({"a|b": ["x|y", "l1\nl2"], "f": [3.0, np.nan]}, index=[4, 7])
    text = render_table(df, max_rows=None, index=True, cells="compact")
    assert text.splitlines() == [
        "| row | a|b | f |",
        "|---|---|---|",
        "| 4 | x/y | 3 |",
        "| 7 | l1 l2 |  |",
    ]
    assert markdown_rows(df, index=True) == text
    escaped = render_table(df, max_rows=None, index=True)
    assert "| 4 | x\\|y | 3.0 |" in escaped and "l1<br>l2" in escaped


def test_index_beside_a_column_named_row() -> None:
    text = render_table(pd.DataFrame({"row": ["a"]}), index=True, cells="compact")
    assert text.splitlines()[0] == "| row | row |"
    with pytest.raises(ValueError, match="cell style"):
        render_table(pd.DataFrame({"a": [1]}), cells="plain")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "options", "expected"),
    [
        ("1,234.5", {}, 1234.5),
        ("\u22123", {}, -3.0),
        ("$1,200", {}, 1200.0),
        ("-$5", {}, -5.0),
        ("12%", {}, 12.0),
        ("1 200", {}, None),
        ("1 200", {"loose": True}, 1200.0),
        ("1e3", {}, None),
        ("1e3", {"scientific": True}, 1000.0),
        ("3.", {"scientific": True}, 3.0),
        ("three", {}, None),
        ("three", {"words": True}, 3.0),
        ("3 times", {"loose": True, "words": True, "scientific": True}, None),
    ],
)
def test_parse_number_options(text: str, options: dict[str, bool], expected: float | None) -> None:
    assert parse_number(text, **options) == expected


def test_answers_and_cells_use_the_shared_parser() -> None:
    assert parse_answer_number("twenty") == 20.0 and parse_answer_number("2.5e1") == 25.0
    out = clean_numbers(pd.DataFrame({"p": ["₹1,200", "$ 3", "n/a"], "s": ["1e3", "2", "3"]}))
    assert out["p"].tolist()[:2] == [1200.0, 3.0] and np.isnan(out["p"].iloc[2])
    assert out["s"].tolist() == ["1e3", "2", "3"]  # exponents stay text in a column


def test_numbers_in_prose() -> None:
    text = "In 1990s, the 1st of 1,234 runners ran 12.5 km for $3.50 (12%); lanes 1,2,3; -4 C."
    assert numbers_in_text(text) == {1990, 1, 1234, 12.5, 3.5, 12, 2, 3, -4}
    assert numbers_in_text("route A12 and v2.0") == set()  # digits inside words are not numbers
