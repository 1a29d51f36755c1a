"""Repairs of SQLite-style aggregate queries, a FROM missing beside a subquery, text
columns mixed with numbers in a CASE or cast to numbers, and ``""`` for an empty
string: each query is one a small model wrote on WTQ or TabFact dev
(`bench/sql_repair_replay.py`), run on DuckDB before and after."""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest
from fakes import ScriptedChatModel

from tablerag_agents.solve.sql import SQLSolver
from tablerag_agents.solve.sql_repair import (
    add_missing_from,
    cast_dirty_numbers,
    cast_text_numbers,
    empty_identifiers_as_text,
    group_bare_columns,
)

GAMES = pd.DataFrame(
    {
        "opponent": ["vålerenga", "brann", "molde", "brann"],
        "result": ["1 - 1", "2 - 0", "1 - 1", "0 - 3"],
        "attendance": [5200, 8100, 4300, 6000],
        "surface": ["grass", "grass", "clay", "grass"],
        "label": ["EMI", "Sony", "EMI", "EMI"],
    }
)


def _error(con: duckdb.DuckDBPyConnection, sql: str) -> str:
    with pytest.raises(duckdb.Error) as err:
        con.execute(sql).fetchall()
    return str(err.value)


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    connection.register("t", GAMES)
    return connection


@pytest.mark.parametrize(
    ("written", "expected_sql", "rows"),
    [
        # One MAX: the plain column is read from the row holding the maximum (SQLite).
        (
            'SELECT "opponent", MAX("attendance") FROM t',
            'SELECT arg_max("opponent", "attendance"), MAX("attendance") FROM t',
            [("brann", 8100)],
        ),
        (
            "SELECT opponent, MIN(attendance) AS low FROM t WHERE surface = 'grass'",
            "SELECT arg_min(opponent, attendance), MIN(attendance) AS low FROM t "
            "WHERE surface = 'grass'",
            [("vålerenga", 5200)],
        ),
        # Braces in the aggregate's argument (a struct literal) are copied as they are.
        (
            "SELECT opponent, MAX(attendance + {'k': 1}['k']) FROM t",
            "SELECT arg_max(opponent, attendance + {'k': 1}['k']), "
            "MAX(attendance + {'k': 1}['k']) FROM t",
            [("brann", 8101)],
        ),
        # A count with a condition on the one row: any row's value (there is one).
        (
            'SELECT CASE WHEN COUNT("opponent") = 1 AND "opponent" = \'vålerenga\' '
            "THEN 'yes' ELSE 'no' END FROM t WHERE \"result\" = '1 - 1' AND \"surface\" = 'grass'",
            'SELECT CASE WHEN COUNT("opponent") = 1 AND ANY_VALUE("opponent") = \'vålerenga\' '
            "THEN 'yes' ELSE 'no' END FROM t WHERE \"result\" = '1 - 1' AND \"surface\" = 'grass'",
            [("yes",)],
        ),
        # An ORDER BY on a column of a one-row aggregate.
        (
            "SELECT COUNT(*) FROM t WHERE opponent = 'brann' ORDER BY attendance DESC LIMIT 1",
            "SELECT COUNT(*) FROM t WHERE opponent = 'brann' ORDER BY ANY_VALUE(attendance) "
            "DESC LIMIT 1",
            [(2,)],
        ),
        # Aggregates only after the select list: "the most frequent label".
        (
            'SELECT DISTINCT "label" FROM t WHERE "surface" = \'grass\' ORDER BY COUNT(*) DESC '
            "LIMIT 1",
            'SELECT DISTINCT "label" FROM t WHERE "surface" = \'grass\' GROUP BY "label" '
            "ORDER BY COUNT(*) DESC LIMIT 1",
            [("EMI",)],
        ),
        (
            'SELECT "opponent" AS team FROM t HAVING COUNT(*) > 1;',
            'SELECT "opponent" AS team FROM t GROUP BY "opponent" HAVING COUNT(*) > 1',
            [("brann",)],
        ),
    ],
)
def test_group_bare_columns_reads_them_as_sqlite_does(
    con: duckdb.DuckDBPyConnection, written: str, expected_sql: str, rows: list[tuple]
) -> None:
    fixed = written
    for _ in range(3):  # DuckDB names one column per error
        try:
            con.execute(fixed).fetchall()
            break
        except duckdb.Error as err:
            repaired = group_bare_columns(fixed, str(err))
            assert repaired is not None, str(err)
            fixed = repaired
    assert fixed == expected_sql
    assert con.execute(fixed).fetchall() == rows


def test_group_bare_columns_leaves_other_queries_alone(con: duckdb.DuckDBPyConnection) -> None:
    grouped = 'SELECT "surface", "opponent" FROM t GROUP BY "surface"'
    assert group_bare_columns(grouped, _error(con, grouped)) is None  # the model grouped
    windowed = 'SELECT "opponent", COUNT(*) OVER () FROM t ORDER BY MAX("attendance")'
    assert group_bare_columns(windowed, _error(con, windowed)) is None
    missing = 'SELECT "nope" FROM t'
    assert group_bare_columns(missing, _error(con, missing)) is None  # another error
    # The column inside a subquery is the subquery's business: only the outer one is wrapped.
    sub = (
        'SELECT "opponent", MAX("attendance") FROM t WHERE "opponent" IN '
        '(SELECT "opponent" FROM t WHERE "surface" = \'grass\')'
    )
    fixed = group_bare_columns(sub, _error(con, sub))
    assert fixed == (
        'SELECT arg_max("opponent", "attendance"), MAX("attendance") FROM t WHERE "opponent" IN '
        '(SELECT "opponent" FROM t WHERE "surface" = \'grass\')'
    )
    assert con.execute(fixed).fetchall() == [("brann", 8100)]
    # A column name inside a string literal is not a reference.
    lit = "SELECT 'opponent', opponent, MAX(attendance) FROM t"
    assert group_bare_columns(lit, _error(con, lit)) == (
        "SELECT 'opponent', arg_max(opponent, attendance), MAX(attendance) FROM t"
    )


def test_add_missing_from_beside_a_subquery(con: duckdb.DuckDBPyConnection) -> None:
    """The outer query lacks FROM while its subquery has one (TabFact dev)."""
    written = (
        'SELECT CASE WHEN "result" = \'2 - 0\' AND "attendance" = '
        "(SELECT MAX(\"attendance\") FROM t) THEN 'yes' ELSE 'no' END"
    )
    error = _error(con, written)
    fixed = add_missing_from(written, error, "t")
    assert fixed == (
        "SELECT CASE WHEN EXISTS (SELECT 1 FROM t WHERE \"result\" = '2 - 0' AND "
        "\"attendance\" = (SELECT MAX(\"attendance\") FROM t)) THEN 'yes' ELSE 'no' END"
    )
    assert con.execute(fixed).fetchall() == [("yes",)]
    # A FROM in the outer query: nothing to add.
    assert add_missing_from('SELECT "result" FROM t', error, "t") is None


def test_cast_text_numbers_in_a_case_mixed_with_a_number() -> None:
    frame = pd.DataFrame({"team": ["a", "b", "a"], "points": ["12", "7 (2)", "N/A"]})
    con = duckdb.connect()
    con.register("t", frame)
    written = 'SELECT SUM(CASE WHEN "team" = \'a\' THEN "points" ELSE 0 END) FROM t'
    fixed = cast_text_numbers(written, _error(con, written), {"team", "points"})
    assert fixed is not None and "THEN TRY_CAST(" in fixed
    assert con.execute(fixed).fetchall() == [(12.0,)]
    flipped = 'SELECT SUM(CASE WHEN "team" = \'b\' THEN 0 ELSE "points" END) FROM t'
    fixed = cast_text_numbers(flipped, _error(con, flipped), {"team", "points"})
    assert fixed is not None and con.execute(fixed).fetchall() == [(12.0,)]


def test_solver_answers_a_sqlite_style_query_without_a_retry() -> None:
    model = ScriptedChatModel(['```sql\nSELECT "opponent", MAX("attendance") FROM t\n```'])
    result = SQLSolver(model).solve("which opponent drew the largest crowd?", GAMES)
    assert result.answer_items[0] == "brann" and result.iterations == 1
    assert model.remaining == 0 and result.trace[0].ok
    assert "arg_max" in result.trace[0].code


SCORERS = pd.DataFrame(
    {
        "Top scorer (Total points)": ["A (85)", "B (79)", "C", "D (101)"],
        "Points": ["85", "79 (2)", "—", "1,010"],
        "Driver": ["a", "b", "", "d"],
        "Co-driver": ["x", "", "y", ""],
    }
)


def test_cast_dirty_numbers_reads_the_first_number() -> None:
    con = duckdb.connect()
    con.register("t", SCORERS)
    text = {str(c) for c in SCORERS.columns}
    written = 'SELECT COUNT(*) FROM t WHERE CAST("Points" AS INT) > 80'
    fixed = cast_dirty_numbers(written, _error(con, written), text)
    assert fixed is not None and fixed.startswith("SELECT COUNT(*) FROM t WHERE TRY_CAST(")
    assert con.execute(fixed).fetchall() == [(2,)]  # 85 and 1,010; "—" is NULL
    bare = "SELECT SUM(CAST(Points AS DECIMAL(10, 2))) FROM t WHERE Driver <> 'CAST(Points AS INT)'"
    fixed = cast_dirty_numbers(bare, _error(con, bare), text)
    assert fixed is not None and fixed.endswith("WHERE Driver <> 'CAST(Points AS INT)'")
    assert float(con.execute(fixed).fetchall()[0][0]) == 85 + 79 + 1010
    # Another error, or a cast of something else: nothing to fix.
    assert cast_dirty_numbers(written, "Binder Error: x", text) is None
    other = "SELECT CAST('1 (2)' AS INT)"
    assert cast_dirty_numbers(other, _error(con, other), text) is None


def test_empty_identifiers_as_text() -> None:
    con = duckdb.connect()
    con.register("t", SCORERS)
    written = 'SELECT COUNT(*) FROM t WHERE "Co-driver" != "" AND "Driver" != \'""\''
    fixed = empty_identifiers_as_text(written, _error(con, written))
    assert fixed == 'SELECT COUNT(*) FROM t WHERE "Co-driver" != \'\' AND "Driver" != \'""\''
    assert con.execute(fixed).fetchall() == [(2,)]
    assert empty_identifiers_as_text('SELECT "" FROM t', "Binder Error: x") is None
