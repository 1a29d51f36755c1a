"""Issue 21 item 5: DuckDB's metadata (settings, databases, paths) is out of reach.

A DuckDB file's views, macros or table definitions, and model-written SQL,
must not read ``duckdb_settings()``, ``duckdb_databases()``,
``current_setting()``, ``pg_settings``... which list the host's home, upload
and working paths. The directories are also emptied before the configuration is
locked (defence in depth).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

from tablerag_agents.errors import TableLoadError
from tablerag_agents.solve.sql_engine import SafeDuckDB
from tablerag_agents.tables import load_table

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hostile_files as hostile  # noqa: E402

METADATA_VIEWS = [
    ("SELECT * FROM duckdb_settings()", None, "duckdb_settings"),
    ("SELECT * FROM duckdb_databases", None, "duckdb_databases"),
    ("SELECT path FROM main.DUCKDB_DATABASES()", None, "duckdb_databases"),
    ("SELECT current_setting('home_directory') AS h", None, "current_setting"),
    ("SELECT 'secret_directory'.current_setting() AS h", None, "current_setting"),
    ("SELECT name, setting FROM pg_settings", None, "pg_settings"),
    ("SELECT * FROM information_schema.schemata", None, "information_schema"),
    ("SELECT * FROM pragma_database_list", None, "pragma_database_list"),
    ("SELECT * FROM query('SELECT * FROM duckdb_settings()')", None, "query"),
    (
        "SELECT * FROM conf()",
        "CREATE MACRO conf() AS TABLE SELECT * FROM duckdb_settings()",
        "duckdb_settings",
    ),
]


@pytest.mark.parametrize(("view", "macro", "name"), METADATA_VIEWS)
def test_duckdb_file_reading_metadata_is_refused(
    tmp_path: Path, view: str, macro: str | None, name: str
) -> None:
    path = hostile.duckdb_with_view(tmp_path / "meta.duckdb", view, macro)
    with pytest.raises(TableLoadError, match="refused: .* reads DuckDB's metadata") as info:
        load_table(path)
    assert name in info.value.reason
    assert str(tmp_path) not in str(info.value.reason)


def test_names_in_strings_or_of_columns_are_not_metadata(tmp_path: Path) -> None:
    path = hostile.duckdb_with_view(
        tmp_path / "ok.duckdb",
        "SELECT 'duckdb_settings()' AS query, 2 AS summary, 3 AS glob FROM range(2)",
    )
    assert load_table(path).df.to_dict("list") == {
        "query": ["duckdb_settings()"] * 2,
        "summary": [2, 2],
        "glob": [3, 3],
    }
    engine = SafeDuckDB({"t": pd.DataFrame({"query": ["a"], "summary": [1]})})
    assert engine.run("SELECT query, summary FROM t -- duckdb_settings()").rows == [("a", 1)]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM duckdb_settings()",
        "SELECT * FROM duckdb_databases",
        "SELECT current_setting('home_directory')",
        "SELECT * FROM pg_settings",
        'SELECT * FROM "duckdb_extensions"()',
        "SELECT * FROM query_table('t')",
        "SELECT getvariable('x')",
    ],
)
def test_model_sql_reading_metadata_is_rejected(sql: str) -> None:
    result = SafeDuckDB({"t": pd.DataFrame({"a": [1]})}).run(sql)
    assert not result.ok and result.rows == []
    assert result.error_type == "SQLRejectedError"
    assert "query only the given tables" in (result.error or "")


def test_locked_connections_name_no_host_directory() -> None:
    from tablerag_agents.tables.sql_task import locked_connection

    con = locked_connection({"t": pd.DataFrame({"a": [1]})}, {}, "64MB")
    try:
        names = ("home_directory", "extension_directory", "secret_directory", "temp_directory")
        values = {n: con.execute(f"SELECT current_setting('{n}')").fetchone() for n in names}
    finally:
        con.close()
    assert values == dict.fromkeys(names, ("",))


def test_a_solve_sends_its_tables_to_the_worker_once() -> None:
    engine = SafeDuckDB({"t": pd.DataFrame({"a": range(1000)})})
    results = [engine.run(f"SELECT count(*) FROM t WHERE a < {n}").rows for n in (10, 20, 30)]
    assert results == [[(10,)], [(20,)], [(30,)]]
    assert engine.tables_sent == 1
