"""Filters on a column the table lacks: moved to the one column holding their values,
or dropped when no cell resembles them. Each query is one the small model wrote on
WTQ or TabFact dev (`bench/sql_repair_replay.py`), on a table shaped like the real one,
run on DuckDB before and after."""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest
from fakes import ScriptedChatModel

from tablerag_agents.solve.sql import SQLSolver
from tablerag_agents.solve.sql_missing_columns import repair_missing_column_filter
from tablerag_agents.solve.sql_repair import fix_column_names

# The Irish national final of 1990: the year is in the caption, not in a column.
FINAL = pd.DataFrame(
    {
        "Draw": [1, 2, 3, 4, 5],
        "Artist": ["The Memories", "Liam Reilly", "Fran Meen", "Dreams", "Maggie Toal"],
        "Song": ["If It Means Losing You", "Somewhere in Europe", "Love", "Sin", "Going"],
        "Points": [60, 130, 42, 71, 35],
        "Place": ["5th", "1st", "7th", "4th", "8th"],
    }
)
DRAFT = pd.DataFrame(
    {
        "Round": [1, 1, 2],
        "Player": ["Saku Koivu", "Jim Smith", "Teemu Selanne"],
        "Nationality": ["Finland", "Canada", "Finland"],
    }
)
RELEASES = pd.DataFrame(
    {
        "Region": ["United Kingdom", "France", "Germany"],
        "Label": ["Bang On!", "Independence Records", "EMI"],
        "Format": ["CD", "CD", "LP"],
    }
)


def _run(frame: pd.DataFrame, sql: str) -> tuple[str, list[tuple[object, ...]]]:
    """Run ``sql`` on ``frame`` as ``t``, repairing missing-column filters until it runs."""
    con = duckdb.connect()
    con.register("t", frame)
    for _ in range(5):
        try:
            return sql, con.execute(sql).fetchall()
        except duckdb.Error as err:
            fixed = repair_missing_column_filter(sql, str(err), {"t": frame})
            assert fixed is not None, f"no repair for {sql!r}: {err}"
            sql = fixed
    raise AssertionError("still failing after five repairs")


def _error(frame: pd.DataFrame, sql: str) -> str:
    con = duckdb.connect()
    con.register("t", frame)
    with pytest.raises(duckdb.Error) as err:
        con.execute(sql).fetchall()
    return str(err.value)


def test_conditions_no_cell_resembles_are_dropped() -> None:
    sql, rows = _run(
        FINAL,
        'SELECT DISTINCT "Artist" FROM t WHERE "Points" < 75 AND "Year" = 1990'
        " AND \"Country\" = 'Ireland'",
    )
    assert sql == 'SELECT DISTINCT "Artist" FROM t WHERE "Points" < 75'
    assert sorted(r[0] for r in rows) == ["Dreams", "Fran Meen", "Maggie Toal", "The Memories"]


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        # The only condition: the WHERE goes, what follows it stays.
        ('SELECT COUNT(*) FROM t WHERE "Year" = 1990', "SELECT COUNT(*) FROM t"),
        ('SELECT COUNT(*) FROM t WHERE "Year" = 1990;\n', "SELECT COUNT(*) FROM t"),
        (
            'SELECT "Artist" FROM t WHERE "Year" = 1990 ORDER BY "Points" DESC LIMIT 1',
            'SELECT "Artist" FROM t ORDER BY "Points" DESC LIMIT 1',
        ),
        # First of several, bare and upper-case.
        (
            "SELECT COUNT(*) FROM t WHERE YEAR = 1990 AND Points > 50",
            "SELECT COUNT(*) FROM t WHERE Points > 50",
        ),
        # Inside a subquery: only the subquery's WHERE changes.
        (
            'SELECT "Artist" FROM t WHERE "Points" > '
            '(SELECT AVG("Points") FROM t WHERE "Year" = 1990)',
            'SELECT "Artist" FROM t WHERE "Points" > (SELECT AVG("Points") FROM t)',
        ),
        # A list of values, none of them in a cell.
        (
            "SELECT COUNT(*) FROM t WHERE \"Event\" IN ('Eurovision', 'Song Contest')"
            ' AND "Points" > 40',
            'SELECT COUNT(*) FROM t WHERE "Points" > 40',
        ),
    ],
)
def test_dropped_condition_leaves_a_valid_query(written: str, expected: str) -> None:
    sql, _ = _run(FINAL, written)
    assert sql == expected


def test_condition_moves_to_the_one_column_holding_its_value() -> None:
    sql, rows = _run(DRAFT, 'SELECT "Player" FROM t WHERE "Country" = \'Finland\'')
    assert sql == 'SELECT "Player" FROM t WHERE "Nationality" = \'Finland\''
    assert sorted(r[0] for r in rows) == ["Saku Koivu", "Teemu Selanne"]
    # A LIKE pattern asks for its fixed part.
    sql, rows = _run(DRAFT, 'SELECT "Player" FROM t WHERE "Name" LIKE \'%Koivu%\'')
    assert sql == 'SELECT "Player" FROM t WHERE "Player" LIKE \'%Koivu%\''
    assert rows == [("Saku Koivu",)]
    # A cell equal to the value wins over cells that only contain it.
    clubs = DRAFT.assign(Team=["Jokerit (Finland)", "Oilers", "Jets"])
    sql, _ = _run(clubs, 'SELECT "Player" FROM t WHERE "Country" = \'Finland\'')
    assert '"Nationality"' in sql
    sql, rows = _run(
        RELEASES, 'SELECT "Label" FROM t WHERE "Label" <> \'Bang On!\' AND "Country" = \'France\''
    )
    assert "\"Region\" = 'France'" in sql and rows == [("Independence Records",)]


@pytest.mark.parametrize(
    ("frame", "written"),
    [
        # Under OR, in a CASE WHEN, or beside BETWEEN: the meaning would change.
        (FINAL, 'SELECT COUNT(*) FROM t WHERE "Year" = 1990 OR "Points" > 50'),
        (FINAL, "SELECT CASE WHEN \"Year\" = 1990 THEN 'yes' ELSE 'no' END FROM t"),
        (FINAL, 'SELECT COUNT(*) FROM t WHERE "Year" = 1990 AND "Points" BETWEEN 40 AND 80'),
        # Used outside a comparison with constants (selected, compared with a column).
        (FINAL, 'SELECT "Year" FROM t WHERE "Year" = 1990'),
        (FINAL, 'SELECT COUNT(*) FROM t WHERE "Year" > "Points"'),
        # The value names a column, or several columns hold it.
        (FINAL, "SELECT COUNT(*) FROM t WHERE \"Category\" = 'Points'"),
        (
            DRAFT.assign(Born=["Finland", "USA", "Sweden"]),
            "SELECT 1 FROM t WHERE \"Country\" = 'Finland'",
        ),
    ],
)
def test_no_repair_when_the_filter_cannot_be_read_safely(frame: pd.DataFrame, written: str) -> None:
    assert repair_missing_column_filter(written, _error(frame, written), {"t": frame}) is None


def test_work_is_bounded_on_a_huge_query() -> None:
    many = " AND ".join(['"Year" = 1990'] * 21)
    sql = f"SELECT COUNT(*) FROM t WHERE {many}"
    assert repair_missing_column_filter(sql, _error(FINAL, sql), {"t": FINAL}) is None
    huge = f'SELECT COUNT(*) FROM t WHERE "Year" = 1990 AND "Song" <> \'{"x" * 20_000}\''
    assert repair_missing_column_filter(huge, _error(FINAL, huge), {"t": FINAL}) is None
    few = " AND ".join(['"Year" = 1990'] * 20)
    sql = f"SELECT COUNT(*) FROM t WHERE {few}"
    assert repair_missing_column_filter(sql, _error(FINAL, sql), {"t": FINAL}) == (
        "SELECT COUNT(*) FROM t"
    )


def test_only_a_missing_column_error_is_repaired() -> None:
    sql = 'SELECT COUNT(*) FROM t WHERE "Year" = 1990'
    assert repair_missing_column_filter(sql, "Parser Error: syntax error", {"t": FINAL}) is None


def test_a_value_inside_a_string_is_not_a_reference() -> None:
    # 'Year = 1990' is a string literal: only the real reference is dropped.
    sql, _ = _run(FINAL, "SELECT COUNT(*) FROM t WHERE \"Song\" <> 'Year = 1990' AND Year = 1990")
    assert sql == "SELECT COUNT(*) FROM t WHERE \"Song\" <> 'Year = 1990'"


def test_singular_column_name_is_read_as_the_plural_column() -> None:
    frame = pd.DataFrame({"team": ["china (chn)"], "rings": ["37.461"], "total": ["229.507"]})
    sql = "SELECT COUNT(*) FROM t WHERE \"ring\" = '37.461'"
    fixed = fix_column_names(sql, _error(frame, sql), set(frame.columns))
    assert fixed == "SELECT COUNT(*) FROM t WHERE \"rings\" = '37.461'"
    error = 'Binder Error: Referenced column "point" not found in FROM clause!'
    assert fix_column_names('SELECT "point" FROM t', error, {"points", "Points "}) is None


def test_solver_answers_without_a_retry() -> None:
    model = ScriptedChatModel(
        ['```sql\nSELECT COUNT(*) FROM t WHERE "Year" = 1990 AND "Points" < 75\n```']
    )
    result = SQLSolver(model).solve("how many artists got fewer than 75 points in 1990?", FINAL)
    assert result.answer_items == ["4"] and model.remaining == 0
    assert result.trace[0].ok and '"Year"' not in result.trace[0].code
