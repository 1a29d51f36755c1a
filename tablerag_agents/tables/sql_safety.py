"""SQL identifier quoting and the DuckDB lock-down shared by file readers and the SQL solver.

Both untrusted DuckDB files (:mod:`tablerag_agents.tables.db_readers`) and
model-written SQL (:mod:`tablerag_agents.solve.sql_engine`) run with external
access (files, network), extension installing/loading and persistent secrets
off, no spill, home, extension or secret directory, and the configuration
locked, so nothing they run can turn those settings back on. Neither may name
what that configuration does not block (:func:`forbidden_references`):
DuckDB's metadata (``duckdb_settings()``, ``duckdb_databases()``,
``current_setting()``, ``pg_settings``... list the host's paths and settings),
functions that run SQL given as a string (``query()``), and every other table
function but the computing ones and the file readers (which external access
off refuses).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb

#: DuckDB settings for untrusted files and SQL; lock the configuration after
#: them (:func:`lock_duckdb`, or ``lock_configuration=True`` at connect time).
DUCKDB_UNTRUSTED_CONFIG: dict[str, Any] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
    "allow_persistent_secrets": False,
    "temp_directory": "",
}

#: Directories emptied by :func:`lock_duckdb` (so no setting names a host path).
#: Set after connecting: DuckDB 2.0 refuses some orders of these at connect time.
_EMPTY_DIRECTORIES = ("home_directory", "extension_directory", "secret_directory")

#: Table functions that only compute.
_COMPUTING_TABLE_FUNCTIONS = frozenset(
    {"range", "generate_series", "unnest", "repeat", "repeat_row", "json_each", "json_tree"}
)
#: Table functions that read files: ``enable_external_access = false`` refuses them.
_FILE_READER_PREFIXES = ("read_", "parquet_", "glob", "sniff_csv")
#: Scalar functions that read the session's settings, variables or catalog.
_STATE_FUNCTIONS = frozenset(
    {
        "current_setting",
        "getvariable",
        "getenv",
        "current_database",
        "current_catalog",
        "current_schema",
        "current_schemas",
        "pg_conf_load_time",
        "pg_postmaster_start_time",
    }
)
#: Schemas made only of metadata views.
_METADATA_SCHEMAS = frozenset({"information_schema", "pg_catalog"})


def quote_ident(name: str) -> str:
    """Quote an SQL identifier (double quotes, inner quotes doubled)."""
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    """Quote an SQL string literal (single quotes, inner quotes doubled)."""
    return "'" + text.replace("'", "''") + "'"


def lock_duckdb(conn: duckdb.DuckDBPyConnection) -> None:
    """Empty the home, extension and secret directories, set the time zone to UTC, then
    lock the connection's configuration.

    Both must come first: once the configuration is locked it cannot change.
    With the time zone in UTC, ``TIMESTAMP WITH TIME ZONE`` values cast to UTC
    timestamps whatever the host's time zone.

    Raises:
        duckdb.Error: When the configuration cannot be locked.
    """
    import duckdb

    for name in _EMPTY_DIRECTORIES:
        conn.execute(f"SET {name} = ''")
    try:
        conn.execute("SET TimeZone = 'UTC'")
    except duckdb.Error:  # built without ICU: TIMESTAMPTZ casts in UTC already
        pass
    conn.execute("SET lock_configuration = true")


@functools.cache
def _metadata_names() -> tuple[frozenset[str], frozenset[str]]:
    """Functions refused when called (with parentheses) and views refused when named."""
    import duckdb

    con = duckdb.connect(":memory:")
    try:
        tables = con.execute(
            "SELECT DISTINCT function_name FROM duckdb_functions() "
            "WHERE function_type IN ('table', 'table_macro')"
        ).fetchall()
        views = con.execute(
            "SELECT DISTINCT view_name FROM duckdb_views() "
            "WHERE internal AND schema_name <> 'information_schema'"
        ).fetchall()
    finally:
        con.close()
    functions = {
        name
        for name in (str(row[0]).lower() for row in tables)
        if name not in _COMPUTING_TABLE_FUNCTIONS and not name.startswith(_FILE_READER_PREFIXES)
    }
    relations = {str(name).lower() for (name,) in views} | _METADATA_SCHEMAS
    return frozenset(functions | _STATE_FUNCTIONS), frozenset(relations)


def _identifier(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1].replace('""', '"')
    return text.lower()


def forbidden_references(sql: str) -> list[str]:
    """The metadata views and forbidden functions ``sql`` names (empty if none).

    Works on DuckDB's tokens, so names in string literals and comments do not
    count, quoted and upper-case names do, and a column that merely shares a
    function's name (``query``, ``summary``) is not a call.
    """
    import duckdb

    functions, relations = _metadata_names()
    try:
        tokens = duckdb.tokenize(sql)
    except duckdb.Error:
        return []  # the parser will refuse it
    spans = [
        (kind, sql[start:end].strip())
        for (start, kind), end in zip(
            tokens, [pos for pos, _ in tokens[1:]] + [len(sql)], strict=True
        )
        if kind != duckdb.token_type.comment
    ]
    found: list[str] = []
    for i, (kind, text) in enumerate(spans):
        if kind not in (duckdb.token_type.identifier, duckdb.token_type.keyword):
            continue
        name = _identifier(text)
        called = i + 1 < len(spans) and spans[i + 1][1].startswith("(")
        if (name in relations or (called and name in functions)) and name not in found:
            found.append(name)
    return found


def read_only_problem(sql: str) -> str | None:
    """Why ``sql`` may not run as untrusted SQL, or None when it is one plain SELECT.

    Refused: empty text, several statements, anything but SELECT (COPY, ATTACH,
    INSTALL, PRAGMA, SET...), and :func:`forbidden_references`.
    """
    import duckdb

    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        return f"syntax error: {exc}"
    if len(statements) != 1:
        return f"expected one statement, got {len(statements)}"
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        return f"only SELECT queries are allowed, not {kind.name}"
    found = forbidden_references(sql)
    if found:
        return (
            f"the query reads DuckDB's settings, catalog or state ({', '.join(found)}); "
            "query only the given tables"
        )
    return None
