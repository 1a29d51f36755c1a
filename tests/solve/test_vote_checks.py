"""The execution checks a vote applies to every run, and a single run's confidence."""

from __future__ import annotations

import pandas as pd
import pytest

from tablerag_agents.solve.base import SolverResult, TraceStep
from tablerag_agents.solve.checks import (
    NOT_AN_OPTION,
    NOT_YES_NO,
    TableCells,
    counts_rows,
    drop_reason,
    implausible,
)
from tablerag_agents.solve.confidence import run_confidence


@pytest.fixture
def cells(seasons: pd.DataFrame) -> TableCells:
    return TableCells({"t": seasons})


TOO_MANY = "a count of 25 is more than the 5 rows"


@pytest.mark.parametrize(
    ("items", "code", "question", "reason"),
    [
        # A cell, a whole-word part of one ("Western" of "4th, Western"), a header, a number.
        (["USL First Division"], "", "which league in 2005?", None),
        (["Western"], "", "which conference in 2001?", None),
        (["Avg. Attendance"], "", "which column has commas?", None),
        (["5,628"], "", "lowest attendance?", None),
        # A name no cell holds; a computed quantity may be any text.
        (["MLS"], "SELECT 'MLS'", "which league in 2005?", "'MLS' is not a cell of the table"),
        (["3 seasons"], "", "how many seasons in the A-League?", None),
        # Words from the question ("more or less?") are fine.
        (["more"], "", "did 2001 draw more or less than 2002?", None),
        # Placeholders are no value unless a cell says so.
        (["None"], "SELECT NULL", "which league in 2010?", "no value ('None')"),
        ([], "", "which league?", "no value"),
        # A count over 5 rows cannot be 25; a sum can.
        (["25"], "SELECT COUNT(*) FROM t, t AS u", "how many seasons?", TOO_MANY),
        (["25"], "len(df.merge(df, how='cross'))", "how many seasons?", TOO_MANY),
        (["24897"], 'SELECT SUM("Avg. Attendance") FROM t', "how many fans?", None),
        (["4"], "SELECT COUNT(*) FROM t WHERE \"League\" = 'USL A-League'", "how many?", None),
        (["yes"], "", "did they play in 2003?", None),
        (["2003"], "", "did they play in 2003?", NOT_YES_NO),
        # A choice question wants one of its options, not a verdict or the values compared.
        (["no"], "", "did 2001 draw more fans than 2002 or 2003?", NOT_AN_OPTION),
        (["7,169", "6,260"], "", "was attendance higher in 2001 or 2002?", NOT_AN_OPTION),
        (["2001"], "", "was attendance higher in 2001 or 2002?", None),
    ],
)
def test_drop_reason(cells: TableCells, items, code, question, reason) -> None:
    assert drop_reason(items, code, question, cells) == reason


def test_what_counts_as_a_counting_program() -> None:
    assert counts_rows('SELECT COUNT(*) FROM t WHERE "x" = 1')
    assert counts_rows("len(df[df['League'] == 'MLS'])")
    assert counts_rows("df['Year'].nunique()")
    assert not counts_rows('SELECT SUM("Goals") FROM t')
    assert not counts_rows("len(df) * 2")  # arithmetic on a count: any size
    assert not counts_rows("df['Goals'].max()")


def test_only_real_answers_are_implausible() -> None:
    assert implausible("'MLS' is not a cell of the table")
    assert implausible("a count of 25 is more than the 5 rows")
    assert not implausible("no value") and not implausible("no value ('None')")
    assert not implausible(NOT_YES_NO) and not implausible(None)
    assert implausible(NOT_AN_OPTION)  # a real answer: kept if no run gives an option


def test_the_cell_check_reads_a_bounded_number_of_values() -> None:
    big = pd.DataFrame({"id": [f"row {i}" for i in range(50)], "n": [[i] for i in range(50)]})
    assert TableCells({"t": big}).has("row 49") and not TableCells({"t": big}).has("row 50")
    assert not TableCells({"t": big}, max_unique=10).has("row 49")
    # Too many texts to read: nothing can be called "not a cell".
    assert TableCells({"t": big}, max_texts=20).has("row 50")


def _result(items: list[str], *, steps: list[TraceStep], code_errors: int = 0) -> SolverResult:
    return SolverResult(
        solver="sql",
        question="which league in 2005?",
        answer="|".join(items),
        answer_items=items,
        trace=steps,
        code_errors=code_errors,
    )


SQL_OK = TraceStep(step=1, action="sql", code='SELECT "League" FROM t', ok=True)
SQL_FAILED = TraceStep(step=1, action="sql", code="SELECT nope FROM t", ok=False)
READ = TraceStep(step=1, action="answer")


def test_single_run_confidence_says_what_is_known(seasons: pd.DataFrame) -> None:
    tables = {"t": seasons}
    right = ["USL First Division"]
    assert run_confidence(_result(right, steps=[SQL_OK]), tables) == 0.5
    assert run_confidence(_result(right, steps=[READ]), tables) == 0.35
    repaired = _result(right, steps=[SQL_FAILED, SQL_OK], code_errors=1)
    assert run_confidence(repaired, tables) == 0.25
    assert run_confidence(_result(right, steps=[SQL_OK]), tables, retried=True) == 0.25
    # A league no cell names: a quarter of the clean run's value.
    assert run_confidence(_result(["MLS"], steps=[SQL_OK]), tables) == 0.125
    assert run_confidence(_result([], steps=[SQL_FAILED]), tables) == 0.0
    # Several items, or a program's lone zero: half (a reading's "0" keeps its prior).
    several = ["USL A-League", "USL First Division"]
    assert run_confidence(_result(several, steps=[SQL_OK]), tables) == 0.25
    count = TraceStep(step=1, action="sql", code="SELECT COUNT(*) FROM t", ok=True)
    assert run_confidence(_result(["0"], steps=[count]), tables) == 0.25
    assert run_confidence(_result(["0.0"], steps=[count]), tables) == 0.25
    assert run_confidence(_result(["3"], steps=[count]), tables) == 0.5
    assert run_confidence(_result(["0"], steps=[READ]), tables) == 0.35
    # A vote's own confidence is kept.
    voted = _result(right, steps=[SQL_OK]).model_copy(update={"confidence": 0.9})
    assert run_confidence(voted, tables) == 0.9
