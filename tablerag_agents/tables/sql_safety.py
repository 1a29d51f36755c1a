"""SQL identifier quoting and the DuckDB lock-down shared by file readers and the SQL solver.

Both untrusted DuckDB files (:mod:`tablerag_agents.tables.db_readers`) and
model-written SQL (:mod:`tablerag_agents.solve.sql_engine`) run with external
access (files, network), extension installing/loading and persistent secrets
off, no spill directory, and the configuration locked, so nothing they run can
turn those settings back on.
"""

from __future__ import annotations

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


def quote_ident(name: str) -> str:
    """Quote an SQL identifier (double quotes, inner quotes doubled)."""
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    """Quote an SQL string literal (single quotes, inner quotes doubled)."""
    return "'" + text.replace("'", "''") + "'"


def lock_duckdb(conn: duckdb.DuckDBPyConnection) -> None:
    """Set the time zone to UTC, then lock the connection's configuration.

    The time zone must be set first: once the configuration is locked it cannot
    change, and ``TIMESTAMP WITH TIME ZONE`` values then cast to UTC timestamps
    whatever the host's time zone.

    Raises:
        duckdb.Error: When the configuration cannot be locked.
    """
    import duckdb

    try:
        conn.execute("SET TimeZone = 'UTC'")
    except duckdb.Error:  # built without ICU: TIMESTAMPTZ casts in UTC already
        pass
    conn.execute("SET lock_configuration = true")
