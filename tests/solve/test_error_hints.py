"""Repair hints for code errors, and that they reach the model."""

from __future__ import annotations

import pandas as pd
import pytest
from fakes import ScriptedChatModel

from tablerag_agents.solve.hints import error_hint
from tablerag_agents.solve.pyreact import PyReActSolver

COLS = ["Year", "Avg. Attendance", "Songwriters"]


def test_key_error_names_the_closest_column() -> None:
    hint = error_hint("Traceback ...\nKeyError: 'Attendance'", "df['Attendance']", COLS)
    assert hint is not None
    assert "no column 'Attendance'" in hint and "Did you mean 'Avg. Attendance'?" in hint
    assert "'Year', 'Avg. Attendance', 'Songwriters'" in hint
    assert error_hint("KeyError: 'Year'", "x['Year']", COLS) is None  # a real column


def test_name_error_suggests_a_defined_name() -> None:
    code = "songwriters_counts = df['Songwriters'].value_counts()\nwriters_counts.idxmin()"
    hint = error_hint("NameError: name 'writers_counts' is not defined", code, COLS)
    assert hint == "Hint: 'writers_counts' is not defined; did you mean 'songwriters_counts'?"
    bare = error_hint("NameError: name 'foo' is not defined", "foo + 1", COLS)
    assert bare == "Hint: define 'foo' in the same code before using it."


@pytest.mark.parametrize(
    ("error", "needle"),
    [
        ("IndexError: single positional indexer is out-of-bounds", "fewer rows"),
        ("IndexError: list index out of range", "fewer rows"),
        ("TypeError: '<' not supported between instances of 'str' and 'int'", "to_numeric"),
        ("ValueError: No axis named Date for object type DataFrame", "df['column'].max()"),
    ],
)
def test_other_hints(error: str, needle: str) -> None:
    hint = error_hint(error, "", COLS)
    assert hint is not None and needle in hint


def test_unknown_errors_get_no_hint() -> None:
    assert error_hint("ZeroDivisionError: division by zero", "1/0", COLS) is None


@pytest.mark.sandbox
def test_hint_is_in_the_observation(sandbox, seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            "```python\ndf['Attendance'].max()\n```",
            "```python\ndf['Avg. Attendance'].max()\n```",
            "Final Answer: 7169",
        ]
    )
    result = PyReActSolver(model, sandbox, mode="text").solve("max attendance?", seasons)
    assert "Did you mean 'Avg. Attendance'?" in result.trace[0].observation
    assert "Did you mean 'Avg. Attendance'?" in model.prompts[1][-1].content
    assert result.answer == "7169"
