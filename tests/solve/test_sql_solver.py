"""SQL solver and its locked-down DuckDB engine, with the scripted fake model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from fakes import ScriptedChatModel

from tablerag_agents.solve.base import SolverContext
from tablerag_agents.solve.sql import SQLSolver, extract_sql
from tablerag_agents.solve.sql_engine import (
    SafeDuckDB,
    SQLRejectedError,
    check_read_only,
    sql_column_names,
)
from tablerag_agents.solve.sql_repair import (
    add_missing_from,
    cast_text_numbers,
    fix_column_names,
    quote_bare_columns,
    quote_literals,
)
from tablerag_agents.tables.sql_task import locked_connection


def test_sql_solver_answers_and_cites(seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            '```sql\nSELECT MAX("Year") FROM t WHERE "League" = \'USL A-League\'\n```',
        ]
    )
    result = SQLSolver(model).solve("last year in the usl a-league?", seasons)
    assert result.error is None
    assert result.answer == "2004" and result.answer_items == ["2004"]
    assert result.iterations == 1 and result.solver == "sql"
    assert result.provenance.method == "value_match"
    assert [(c.row, c.column, c.value) for c in result.provenance.cells] == [(3, "Year", "2004")]
    assert "2004" in result.explanation and "row 3" in result.explanation
    # The prompt shows SQL-quoted columns with dtypes after numeric clean-up.
    prompt = model.prompts[0][1].content
    assert '"Avg. Attendance" (int)' in prompt and '"League" (str)' in prompt
    assert result.input_tokens > 50 and result.output_tokens == 11
    assert result.trace[0].code.startswith("SELECT MAX") and result.trace[0].ok


def test_sql_retry_feeds_the_error_back(seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            'SELECT "Attendance" FROM t WHERE "Year" = 2002',
            '```sql\nSELECT "Avg. Attendance" FROM t WHERE "Year" = 2002;\n```',
        ]
    )
    result = SQLSolver(model).solve("attendance in 2002?", seasons)
    assert result.answer == "6260"
    assert result.iterations == 2 and result.code_errors == 1
    retry_prompt = model.prompts[1][-1].content
    assert "Attendance" in retry_prompt and "failed" in retry_prompt
    assert result.trace[0].ok is False and "Binder" in result.trace[0].observation


def test_sql_retry_on_empty_then_gives_up(seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        ['SELECT "Year" FROM t WHERE "League" = \'MLS\''] * 2,
    )
    result = SQLSolver(model, max_retries=1).solve("when in MLS?", seasons)
    assert result.iterations == 2
    assert "no rows" in model.prompts[1][-1].content
    assert result.answer == "" and result.error == "no answer produced"


def test_sql_multi_column_result_asks_for_the_answer(seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            '```sql\nSELECT "Year", "Regular Season" FROM t WHERE "Year" IN (2001, 2004)\n```',
            "Answer: 2001|2004",
        ]
    )
    result = SQLSolver(model).solve("which years were they Western?", seasons)
    assert result.answer_items == ["2001", "2004"]
    assert "4th, Western" in model.prompts[1][0].content
    assert result.iterations == 1 and len(result.trace) == 2
    assert result.trace[1].action == "answer"
    assert result.provenance.evidence_rows[0] == {"Year": "2001", "Regular Season": "4th, Western"}


def test_sql_hostile_column_names(hostile: pd.DataFrame) -> None:
    assert sql_column_names(list(hostile.columns)) == [
        'na"me; DROP TABLE t; --',
        "select",
        "col3",
        "Année (€)",
    ]
    model = ScriptedChatModel(
        ['```sql\nSELECT "na""me; DROP TABLE t; --" FROM t WHERE "col3" > 15 AND "select" < 3\n```']
    )
    ctx = SolverContext(question="which?", tables={"weird table": hostile})
    result = SQLSolver(model).solve(ctx)
    assert result.answer == "b"
    assert result.provenance.cells[0].row == 1
    engine = SafeDuckDB({"t": hostile}, aliases={"weird table": "t"})
    assert engine.run('SELECT COUNT(*) FROM "weird table"').rows == [(3,)]
    assert engine.run("SELECT SUM(\"Année (€)\" = 'z') FROM t").rows == [(1,)]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1; SELECT 2",
        "COPY t TO 'x.csv'",
        "ATTACH 'x.db'",
        "INSTALL httpfs",
        "PRAGMA version",
        "SET enable_external_access = true",
        "CALL pragma_version()",
        "",
        "SELEC 1",
    ],
)
def test_check_read_only_rejects(sql: str) -> None:
    with pytest.raises(SQLRejectedError):
        check_read_only(sql)


def test_engine_blocks_files_even_without_the_courtesy_check(tmp_path: Path) -> None:
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n42\n")
    engine = SafeDuckDB({"t": pd.DataFrame({"a": [1]})})
    # SELECTs that pass the statement check are stopped by DuckDB itself.
    for sql in (
        f"SELECT * FROM read_csv('{secret}')",
        "SELECT * FROM read_csv('/etc/passwd')",
        f"SELECT * FROM '{secret}'",
        "SELECT read_text('/etc/passwd')",
    ):
        res = engine.run(sql)
        assert not res.ok and res.rows == [], sql
    # Run the dangerous statements on the locked connection directly.
    con = locked_connection(engine.tables, {}, engine.memory_limit)
    out = tmp_path / "out.csv"
    for sql in (
        f"COPY t TO '{out}'",
        f"ATTACH '{tmp_path / 'x.db'}' AS x",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SET enable_external_access = true",
        "SET lock_configuration = false",
    ):
        with pytest.raises(duckdb.Error):
            con.execute(sql)
    con.close()
    assert not out.exists() and not (tmp_path / "x.db").exists()
    res = engine.run(f"COPY t TO '{out}'")
    assert res.error_type == "SQLRejectedError" and "COPY" in (res.error or "")


def test_engine_timeout_and_caps() -> None:
    engine = SafeDuckDB({"t": pd.DataFrame({"a": range(1000)})}, timeout_s=0.3, max_rows=10)
    res = engine.run("SELECT COUNT(*) FROM range(10000000000) a, range(10) b")
    assert res.timed_out and not res.ok and res.seconds < 5
    capped = engine.run("SELECT a FROM t")
    assert len(capped.rows) == 10 and capped.truncated
    assert "more than 10 rows" in capped.observation()
    wide = SafeDuckDB({"t": pd.DataFrame({f"c{i}": range(50) for i in range(10)})}, max_cells=100)
    assert len(wide.run("SELECT * FROM t").rows) == 10


def test_extract_sql_variants() -> None:
    assert extract_sql("```sql\nSELECT 1\n```") == "SELECT 1"
    assert extract_sql("Here:\n```\nSELECT 2\n```") == "SELECT 2"
    assert extract_sql("The query is SELECT 3 FROM t\n\nThis selects...") == "SELECT 3 FROM t"
    assert extract_sql("I cannot answer.") is None


@pytest.mark.parametrize(
    ("written", "run"),
    [
        # a value in double quotes (read as a column name)
        (
            'SELECT "Year" FROM t WHERE "Regular Season" = "2nd, Pacific"',
            'SELECT "Year" FROM t WHERE "Regular Season" = \'2nd, Pacific\'',
        ),
        # a column name that misses the header by a space
        (
            "SELECT year FROM t WHERE \"RegularSeason\" = '2nd, Pacific'",
            "SELECT year FROM t WHERE \"Regular Season\" = '2nd, Pacific'",
        ),
    ],
)
def test_slips_are_fixed_without_a_retry(seasons: pd.DataFrame, written: str, run: str) -> None:
    model = ScriptedChatModel([f"```sql\n{written}\n```"])
    result = SQLSolver(model).solve("which year were they 2nd in the Pacific?", seasons)
    assert result.answer == "2002" and result.iterations == 1
    assert result.trace[0].code == run


def test_quote_literals_cases() -> None:
    assert quote_literals('SELECT "a" FROM t', 'Referenced column "a" not found', {"a"}) is None
    fixed = quote_literals(
        'SELECT 1 FROM t WHERE "x" = "O\'Neil"', 'Referenced column "O\'Neil" not found', {"x"}
    )
    assert fixed == "SELECT 1 FROM t WHERE \"x\" = 'O''Neil'"


def test_quote_literals_only_in_comparisons() -> None:
    err = 'Referenced column "Lyon" not found'
    assert quote_literals('SELECT "Lyon" FROM t', err, {"City"}) is None
    assert (
        quote_literals('SELECT 1 FROM t WHERE "City" IN ("Lyon", "Nice")', err, {"City"})
        == 'SELECT 1 FROM t WHERE "City" IN (\'Lyon\', "Nice")'
    )
    assert (
        quote_literals('SELECT 1 FROM t WHERE "City" ILIKE "Lyon"', err, {"City"})
        == "SELECT 1 FROM t WHERE \"City\" ILIKE 'Lyon'"
    )


def test_fix_column_names_cases() -> None:
    known = {"State/ Province", "No. of titles", "Name", "Year", "year_"}
    err = 'Referenced column "{}" not found'.format
    assert (
        fix_column_names('SELECT "State/Province" FROM t', err("State/Province"), known)
        == 'SELECT "State/ Province" FROM t'
    )
    # A bare name is replaced outside literals only.
    assert (
        fix_column_names(
            "SELECT SUM(no_of_titles) FROM t WHERE Name = 'no_of_titles'",
            err("no_of_titles"),
            known,
        )
        == "SELECT SUM(\"No. of titles\") FROM t WHERE Name = 'no_of_titles'"
    )
    assert fix_column_names('SELECT "Yeer" FROM t', err("Yeer"), known) is None  # no match
    assert fix_column_names('SELECT "YEAR" FROM t', err("YEAR"), known) is None  # two match
    assert fix_column_names('SELECT "x" FROM t', "Parser Error: near x", known) is None


TYPE_ERROR = "Binder Error: Cannot compare values of type VARCHAR and type INTEGER_LITERAL"


@pytest.mark.parametrize(
    ("written", "rows"),
    [
        ('SELECT COUNT(*) FROM t WHERE "Seats" > 100', [(2,)]),
        ('SELECT "Party" FROM t WHERE 100 < "Seats" ORDER BY 1', [("Blue",), ("Red",)]),
        ("SELECT SUM(Seats) FROM t", [(1340.0,)]),
        ('SELECT MAX("Seats") - MIN("Seats") FROM t', [(1180.0,)]),
        ('SELECT "Party" FROM t WHERE "Seats" BETWEEN 1000 AND 2000', [("Red",)]),
    ],
)
def test_cast_text_numbers_makes_arithmetic_run(written: str, rows: list[tuple]) -> None:
    frame = pd.DataFrame(
        {"Party": ["Red", "Blue", "Green", "Grey"], "Seats": ["1,200", "120 (3)", "N/A", "20"]}
    )
    con = duckdb.connect()
    con.register("t", frame)
    with pytest.raises(duckdb.Error) as err:
        con.execute(written).fetchall()
    fixed = cast_text_numbers(written, str(err.value), {"Party", "Seats"})
    assert fixed is not None and "TRY_CAST" in fixed
    assert con.execute(fixed).fetchall() == rows


def test_cast_text_numbers_leaves_text_uses_alone() -> None:
    cols = {"Party", "Seats"}
    # Not a type error, or no numeric use of a text column: nothing to fix.
    assert cast_text_numbers('SELECT SUM("Seats") FROM t', "Parser Error: x", cols) is None
    sql = 'SELECT "Party" FROM t WHERE "Seats" = \'N/A\' AND "Party" = "Seats"'
    assert cast_text_numbers(sql, TYPE_ERROR, cols) is None
    # Column names inside a string literal are not touched.
    fixed = cast_text_numbers("SELECT 'Seats' FROM t WHERE Seats < 5", TYPE_ERROR, cols)
    assert fixed is not None and fixed.startswith("SELECT 'Seats' FROM t WHERE TRY_CAST(")


def test_sum_of_a_number_like_text_column_runs_without_a_retry() -> None:
    frame = pd.DataFrame({"Club": ["A", "B", "C"], "Titles": ["3", "2 (1 shared)", "—"]})
    model = ScriptedChatModel(['```sql\nSELECT SUM("Titles") FROM t\n```'])
    result = SQLSolver(model).solve("how many titles in total?", frame)
    assert result.answer == "5" and result.iterations == 1 and model.remaining == 0
    assert "TRY_CAST" in result.trace[0].code


def test_repeated_query_is_not_rerun(seasons: pd.DataFrame) -> None:
    from tablerag_agents.solve.sql import REPEATED

    model = ScriptedChatModel(['SELECT "Year" FROM t WHERE "League" = \'MLS\''] * 2)
    result = SQLSolver(model, max_retries=2).solve("when in MLS?", seasons)
    assert [s.observation for s in result.trace] == ["(no rows)", REPEATED]
    assert model.remaining == 0 and len(model.prompts) == 2  # stopped early, no third call


def test_a_missing_column_error_lists_every_column(seasons: pd.DataFrame) -> None:
    """nt-3193: a query on a column the table lacks ("Year" came from the caption); DuckDB's
    own "Candidate bindings" name only a few columns. A ``>`` filter is not one the
    automatic repair moves or drops, so the model's retry sees the hint."""
    model = ScriptedChatModel(
        [
            'SELECT "League" FROM t WHERE "Season" > 2001 LIMIT 1',
            'SELECT "League" FROM t WHERE "Year" = \'2002\'',
        ]
    )
    result = SQLSolver(model, max_retries=2).solve("which league in 2002?", seasons)
    assert result.answer == "USL A-League"
    retry = model.prompts[1][-1].content
    assert 'there is no column "Season"' in retry and '"Avg. Attendance"' in retry
    assert "leave the condition out" in retry


def test_quote_bare_columns_cases() -> None:
    columns = {"Top scorer (League)", "Top scorer", "Avg. Attendance", "Club"}
    error = 'Parser Error: syntax error at or near "("'
    assert quote_bare_columns(
        "SELECT Top scorer (League) FROM t WHERE Club = 'Top scorer (League)'", error, columns
    ) == ("SELECT \"Top scorer (League)\" FROM t WHERE Club = 'Top scorer (League)'")
    assert (
        quote_bare_columns('SELECT "Avg. Attendance", Avg. Attendance FROM t', error, columns)
        == 'SELECT "Avg. Attendance", "Avg. Attendance" FROM t'
    )
    assert quote_bare_columns("SELECT Club FROM t", error, columns) is None  # plain names
    assert quote_bare_columns("SELECT Top scorer FROM t", "Conversion Error: x", columns) is None


def test_an_unquoted_column_with_spaces_runs_without_a_retry(seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(["SELECT MAX(Avg. Attendance) FROM t WHERE Year = '2002'"])
    result = SQLSolver(model).solve("attendance in 2002?", seasons)
    assert result.answer == "6260" and len(model.prompts) == 1


def test_sql_self_consistency_keeps_the_majority_answer(seasons: pd.DataFrame) -> None:
    lowest = 'SELECT "Year" FROM t ORDER BY "Avg. Attendance" LIMIT 1'
    model = ScriptedChatModel(
        [
            'SELECT "Year" FROM t ORDER BY "Year" LIMIT 1',  # greedy: 2001
            lowest,  # 2004
            lowest.replace("LIMIT", "ASC LIMIT"),  # 2004 again, written differently
            'SELECT "Year" FROM t WHERE "League" = \'MLS\'',  # no rows: no vote
            "SELECT nope FROM t",  # an error: no vote
        ]
    )
    result = SQLSolver(model, samples=5).solve("least attended year?", seasons)
    assert result.answer == "2004" and model.remaining == 0
    assert result.iterations == 5 and result.code_errors == 1
    assert result.trace[-1].ok is False and "ASC LIMIT" not in result.trace[0].code
    # The answer's provenance comes from the query that won the vote.
    assert [(c.row, c.value) for c in result.provenance.cells] == [(3, "2004")]
    # Its confidence is the agreement over all five queries (the failed ones included).
    assert result.confidence == pytest.approx(2 / 5)


def test_sql_samples_reach_the_sql_solver_from_the_graph_settings() -> None:
    from tablerag_agents.graphs import Context

    from tablerag_agents.solve.factory import make_solver

    solver = make_solver("sql", ScriptedChatModel([]), sql_samples=3)
    assert isinstance(solver, SQLSolver) and solver.samples == 3
    assert make_solver("sql", ScriptedChatModel([])).samples == 1  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="sql_samples must be >= 1"):
        make_solver("sql", ScriptedChatModel([]), sql_samples=0)
    with pytest.raises(ValueError, match="sql_samples must be >= 1"):
        Context(sql_samples=0)


def test_majority_index_counts_every_value() -> None:
    from tablerag_agents.solve.answer import majority_index

    assert majority_index([["0"], ["0"], ["Lyon"]]) == 0  # a 0 is an answer like any other
    assert majority_index([[], ["0"], ["Lyon"], ["0"]]) == 1  # no value: no vote
    assert majority_index([["Nice"], ["Lyon"], ["lyon "]]) == 1
    assert majority_index([["a", "b"], ["B", "A"], ["c"]]) == 0
    assert majority_index([["0"], []]) == 0 and majority_index([[], []]) is None
    with pytest.raises(ValueError, match="samples"):
        SQLSolver(ScriptedChatModel([]), samples=0)


def test_a_filter_on_a_number_the_question_never_states_is_questioned_once(
    seasons: pd.DataFrame,
) -> None:
    model = ScriptedChatModel(
        [
            "```sql\nSELECT COUNT(*) FROM t"
            ' WHERE "League" = \'USL A-League\' AND "Division" = 2\n```',
            "```sql\nSELECT COUNT(*) FROM t WHERE \"League\" = 'USL A-League'\n```",
        ]
    )
    result = SQLSolver(model).solve("how many seasons in the usl a-league?", seasons)
    assert model.remaining == 0 and result.answer == "4"
    follow = model.prompts[1][-1].content
    assert '"Division" = 2' in follow and "does not mention" in follow


def test_numbers_the_question_states_are_not_questioned(seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        ['```sql\nSELECT "League" FROM t WHERE "Year" = 2003 AND "Division" = \'2\'\n```']
    )
    result = SQLSolver(model).solve("which league in 2003, division two?", seasons)
    assert model.remaining == 0 and result.answer == "USL A-League"


def test_a_kept_unasked_filter_is_asked_about_only_once(seasons: pd.DataFrame) -> None:
    query = '```sql\nSELECT COUNT(*) FROM t WHERE "Division" = 2\n```'
    model = ScriptedChatModel([query, query])
    result = SQLSolver(model).solve("how many seasons?", seasons)
    assert model.remaining == 0 and result.answer == "5"  # the repeat ends the loop


_BOMB_RUN = r"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

def peak_rss_mb():  # VmHWM: ru_maxrss would count the parent's pages at fork
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) // 1024 for line in fh if line.startswith("VmHWM"))
sys.path.insert(0, sys.argv[1])
import pandas as pd
from fakes import ScriptedChatModel
from tablerag_agents.solve.sql import SQLSolver

model = ScriptedChatModel([
    "```sql\nSELECT length(repeat('x', 2000000000)) AS n FROM t\n```",
    '```sql\nSELECT MAX("a") FROM t\n```',
])
result = SQLSolver(model, timeout_s=3).solve("largest a?", pd.DataFrame({"a": [1, 5, 3]}))
print(json.dumps({
    "answer": result.answer,
    "retry": str(model.prompts[1][-1].content),
    "host_rss_mb": peak_rss_mb(),
}))
"""


def test_sql_solver_reports_a_memory_bomb_to_the_model_and_recovers() -> None:
    """Issue 21 item 2: string allocations past DuckDB's memory_limit stop in the worker.

    Run in a fresh process (address space capped at 3 GB) so the host's peak RSS
    is measurable; in-process DuckDB took ~4 GB of the host for this query.
    """
    tests = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [sys.executable, "-c", _BOMB_RUN, str(tests)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "Error (MemoryLimit): query exceeded the memory limit of 512MB" in out["retry"]
    assert out["answer"] == "5"
    assert out["host_rss_mb"] < 450, out


def test_engine_rows_keep_duckdb_python_types() -> None:
    """Rows cross the worker boundary as the Python values DuckDB's client gives."""
    import datetime as dt
    from decimal import Decimal

    engine = SafeDuckDB({"t": pd.DataFrame({"a": [1]})})
    row = engine.run(
        "SELECT [1, 2] AS l, {'x': 1} AS s, 170141183460469231731687303715884105727::HUGEINT "
        "AS h, 'x'::BLOB AS b, "
        "DATE '2020-01-02' AS d, 1.5::DECIMAL(3, 1) AS m, NULL AS n, INTERVAL 90 MINUTE AS i, "
        "a, 'é' AS e FROM t"
    ).rows
    assert row == [
        (
            [1, 2],
            {"x": 1},
            2**127 - 1,
            b"x",
            dt.date(2020, 1, 2),
            Decimal("1.5"),
            None,
            dt.timedelta(minutes=90),
            1,
            "é",
        )
    ]


# A TabFact table's cells (AFL round: home team, score, crowd).
AFL = pd.DataFrame(
    {
        "home team": ["south melbourne", "carlton", "richmond"],
        "home team score": ["9.10 (64)", "12.8 (80)", "16.12 (108)"],
        "crowd": [12000, 30000, 21000],
    }
)


def test_add_missing_from_cases() -> None:
    error = (
        'Binder Error: Referenced column "crowd" was not found because the FROM clause is missing'
    )
    row = (
        "SELECT CASE WHEN \"home team\" = 'carlton' AND \"crowd\" > 20000 THEN 'yes' ELSE 'no' END;"
    )
    assert add_missing_from(row, error, "t") == (
        "SELECT CASE WHEN EXISTS (SELECT 1 FROM t WHERE \"home team\" = 'carlton' AND "
        "\"crowd\" > 20000) THEN 'yes' ELSE 'no' END"
    )
    agg = "SELECT CASE WHEN MAX(\"crowd\") = 30000 THEN 'yes' ELSE 'no' END"
    assert add_missing_from(agg, error, "t") == agg + " FROM t"
    assert add_missing_from('SELECT MAX("crowd")', error, "t") == 'SELECT MAX("crowd") FROM t'
    # Another error, or a query that has a FROM, is left alone.
    assert add_missing_from(row, "Binder Error: no such column", "t") is None
    assert add_missing_from('SELECT "crowd" FROM t', error, "t") is None


def test_a_yes_no_query_without_from_runs_without_a_retry() -> None:
    model = ScriptedChatModel(
        [
            '```sql\nSELECT CASE WHEN "home team" = \'carlton\' AND "crowd" = 30000 '
            "THEN 'yes' ELSE 'no' END\n```"
        ]
    )
    result = SQLSolver(model).solve("is it true that carlton drew a crowd of 30000?", AFL)
    assert result.answer_items == ["yes"] and result.iterations == 1 and model.remaining == 0
    assert "EXISTS (SELECT 1 FROM t WHERE" in result.trace[0].code and result.trace[0].ok
