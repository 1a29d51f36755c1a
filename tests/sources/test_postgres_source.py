"""Tables left in a real PostgreSQL server (a throwaway cluster on loopback).

Skipped without PostgreSQL's binaries, except in CI (``CI=true``), where that fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import BagOfWordsEmbeddings
from source_checks import assert_same_indexes_as_pandas, assert_solver_counts_all_rows
from source_data import N_ROWS, row_count

from tablerag_agents.errors import TableLoadError
from tablerag_agents.retrieval.corpus import CorpusIndex
from tablerag_agents.solve.sql_engine import SourceSQL
from tablerag_agents.tables import load_table
from tablerag_agents.tables.source import SourceSettings
from tablerag_agents.tables.source_remote import DatabaseSource

SMALL = SourceSettings(sample_rows=20)


def test_load_table_and_indexes(pg_url: str) -> None:
    table = load_table(pg_url, table="sales", source_settings=SMALL)
    assert table.source is not None and len(table.df) == 20
    assert table.n_rows == N_ROWS
    assert table.source.columns()[0] == ("order_id", "int")
    assert_same_indexes_as_pandas(table)


def test_schema_qualified_table(pg_url: str) -> None:
    source = DatabaseSource(pg_url, "public.sales", settings=SMALL)
    assert source.name == "sales" and source.n_rows() == N_ROWS


def test_sql_solver_counts_every_row(pg_url: str) -> None:
    url = pg_url.replace("postgresql://", "postgresql+psycopg://")  # SQLAlchemy's driver form
    assert_solver_counts_all_rows(load_table(url, table="sales", source_settings=SMALL))


def test_writes_are_refused_by_the_read_only_session(pg_url: str) -> None:
    source = DatabaseSource(pg_url, "sales", settings=SMALL)
    # Past the text check, straight to the session.
    # A statement that turns the session read-write runs, and is undone by the rollback.
    flip = "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE"
    source.query(flip, names=[], timeout_s=5, max_rows=1, max_cells=1)
    for statement, names in (
        ("DELETE FROM sales", ["t"]),  # sent as WITH "t" AS (...) DELETE FROM sales
        ("WITH x AS (SELECT 1) UPDATE sales SET region = 'x'", ["t"]),
        ("CREATE TABLE stolen AS SELECT * FROM sales", []),
    ):
        outcome = source.query(statement, names=names, timeout_s=5, max_rows=10, max_cells=100)
        assert not outcome.ok
        assert "read-only transaction" in (outcome.error or "")
    # A SELECT that writes passes the text check; the session refuses it.
    engine = SourceSQL(source, ["t"])
    bumped = engine.run("SELECT nextval('counter')")
    assert not bumped.ok and "read-only transaction" in (bumped.error or "")
    assert engine.run("DELETE FROM t").error_type == "SQLRejectedError"
    assert row_count(pg_url) == N_ROWS


def test_statement_timeout_and_caps(pg_url: str) -> None:
    engine = SourceSQL(DatabaseSource(pg_url, "sales", settings=SMALL), ["t"], timeout_s=1.0)
    slow = engine.run("SELECT pg_sleep(30)")
    assert slow.timed_out and slow.seconds < 10
    engine.max_rows = 25
    rows = engine.run("SELECT a.order_id FROM t AS a, t AS b")  # 360,000 rows streamed
    assert rows.ok and rows.truncated and len(rows.rows) == 25
    answer = engine.run("SELECT region, count(*) AS n FROM t GROUP BY region ORDER BY n DESC")
    assert answer.rows[0] == ("north", 250)


def test_unknown_table_and_refused_connection(pg_url: str) -> None:
    with pytest.raises(TableLoadError, match="does not exist"):
        DatabaseSource(pg_url, "missing")
    wrong = pg_url.rsplit("/", 1)[0] + "/no_such_db"
    with pytest.raises(TableLoadError, match="no_such_db"):
        DatabaseSource(wrong, "sales")


def test_no_password_in_labels_errors_or_saved_indexes(pg_url: str, tmp_path: Path) -> None:
    secret = "s3cret-pw"
    url = pg_url.replace("tablerag@", f"tablerag:{secret}@")  # trust auth ignores it
    table = load_table(url, table="sales", source_settings=SMALL)
    assert table.source is not None
    assert secret not in table.source.label and secret not in repr(table)
    with pytest.raises(TableLoadError) as missing:
        DatabaseSource(url, "missing")
    assert secret not in str(missing.value)
    CorpusIndex.build([table], BagOfWordsEmbeddings(), path=tmp_path / "ix", progress=False)
    for path in (tmp_path / "ix").rglob("*"):
        assert not path.is_file() or secret.encode() not in path.read_bytes(), path
