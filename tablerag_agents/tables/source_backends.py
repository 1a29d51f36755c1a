"""Connections of the ``source`` worker task: PostgreSQL and SQLite (and the shared base).

Each backend runs two kinds of SQL: our own aggregate queries (profiles,
counts, samples) and one model-written SELECT at a time (:meth:`Backend.query`),
whose rows are fetched one past the cap and no further. The boundary for the
model's SQL is the session itself, not a text filter:

- PostgreSQL: every transaction is read-only (``default_transaction_read_only``
  at connect time, ``SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY``, and
  ``SET TRANSACTION READ ONLY`` again in each), one statement per transaction,
  rolled back after (so a setting it changes is undone too), each under
  ``SET LOCAL statement_timeout``; rows stream
  (single-row mode), so a huge result is cancelled once the cap is reached. Use
  a role that may only SELECT the tables you name: the server's privileges are
  what keep its other tables and functions out of reach.
- SQLite: the file is opened ``mode=ro`` with ``trusted_schema`` off and
  extension loading disabled (:func:`~tablerag_agents.tables.db_readers.connect_sqlite`);
  a progress handler interrupts a statement past its time.
- A CSV/Parquet file: DuckDB, see :mod:`tablerag_agents.tables.source_duckdb`.

The model's table name ``t`` (and the table id) are a ``WITH`` clause put in
front of the query, which keeps the statement's kind: a write statement still
reaches the read-only session.
"""

from __future__ import annotations

import re
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tablerag_agents.tables.db_readers import connect_sqlite
from tablerag_agents.tables.sql_safety import quote_ident

_LEADING_WITH = re.compile(r"^\s*WITH\s+(RECURSIVE\s+)?", re.IGNORECASE)

Rows = list[tuple[Any, ...]]


class QueryTimeout(Exception):
    """The statement ran past its time limit."""


def with_names(sql: str, ref: str, names: Sequence[str]) -> str:
    """``sql`` with each of ``names`` defined in front as ``SELECT * FROM ref``.

    A query that starts with its own ``WITH`` gets the names added to it; the
    statement's kind (SELECT, or a write) does not change.
    """
    ctes = ", ".join(f"{quote_ident(n)} AS (SELECT * FROM {ref})" for n in names)
    if not ctes:
        return sql
    match = _LEADING_WITH.match(sql)
    if match is None:
        return f"WITH {ctes} {sql}"
    return f"WITH {match.group(1) or ''}{ctes}, {sql[match.end() :]}"


class Backend(ABC):
    """One open table for the worker: our queries and the model's."""

    dialect: str
    ref: str
    """The table as an SQL reference."""

    @abstractmethod
    def columns(self) -> list[tuple[str, str]]:
        """Column names and their SQL type names."""

    @abstractmethod
    def fetch(self, sql: str, timeout_s: float, limit: int | None = None) -> Rows:
        """Run our own SELECT (at most ``limit`` rows)."""

    @abstractmethod
    def query(
        self, sql: str, names: Sequence[str], timeout_s: float, limit: int
    ) -> tuple[list[str], Rows]:
        """Run the model's statement; return its columns and at most ``limit`` rows."""

    def count_distinct(self, expr: str, approximate: bool) -> str:
        """The aggregate counting distinct values of ``expr``."""
        return f"count(DISTINCT {expr})"

    def as_text(self, expr: str) -> str:
        """``expr`` as text (for columns profiled as text: json, uuid, enums...)."""
        return expr

    @abstractmethod
    def close(self) -> None:
        """Close the connections."""


class PostgresBackend(Backend):
    """A PostgreSQL table through a read-only psycopg session."""

    dialect = "postgresql"

    def __init__(self, conninfo: str, table: str, schema: str | None) -> None:
        """Connect (read-only) and check that the table exists."""
        import psycopg

        self.conn = psycopg.connect(
            conninfo,
            autocommit=False,
            options="-c default_transaction_read_only=on",
            connect_timeout=10,
        )
        self.conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
        self.conn.commit()
        self.ref = (f"{quote_ident(schema)}." if schema else "") + quote_ident(table)
        self._described: list[tuple[str, str]] | None = None

    def columns(self) -> list[tuple[str, str]]:
        """Column names with ``format_type`` names (from a zero-row SELECT)."""
        if self._described is None:
            try:
                cur = self.conn.execute(f"SELECT * FROM {self.ref} LIMIT 0")
                oids = [(d.name, d.type_code) for d in cur.description or []]
                names = {
                    oid: name
                    for oid, name in self.conn.execute(
                        "SELECT oid, format_type(oid, NULL) FROM pg_type WHERE oid = ANY(%s)",
                        [[o for _, o in oids]],
                    ).fetchall()
                }
            finally:
                self.conn.rollback()
            self._described = [(n, str(names.get(o, "text"))) for n, o in oids]
        return self._described

    def _run(self, sql: str, timeout_s: float, limit: int | None) -> tuple[list[str], Rows]:
        import psycopg

        try:
            # Each statement is its own transaction, rolled back after: a setting it
            # changed (even SET SESSION ... READ WRITE) is undone with it.
            self.conn.execute("SET TRANSACTION READ ONLY")
            self.conn.execute(f"SET LOCAL statement_timeout = {max(1, int(timeout_s * 1000))}")
            cur = self.conn.cursor()
            rows: Rows = []
            for row in cur.stream(sql):
                rows.append(tuple(row))
                if limit is not None and len(rows) >= limit:
                    break
            columns = [d.name for d in cur.description or []]
        except psycopg.errors.QueryCanceled as exc:
            raise QueryTimeout(str(exc)) from None
        finally:
            self.conn.rollback()
        return columns, rows

    def fetch(self, sql: str, timeout_s: float, limit: int | None = None) -> Rows:
        """Run our SELECT in a read-only transaction."""
        return self._run(sql, timeout_s, limit)[1]

    def as_text(self, expr: str) -> str:
        """``expr`` cast to text (json has no equality, uuid no ``length``)."""
        return f"CAST({expr} AS text)"

    def query(
        self, sql: str, names: Sequence[str], timeout_s: float, limit: int
    ) -> tuple[list[str], Rows]:
        """Run the model's statement in a read-only transaction, rows streamed."""
        return self._run(with_names(sql, self.ref, names), timeout_s, limit)

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()


class SQLiteBackend(Backend):
    """A SQLite table through a read-only (``mode=ro``) connection."""

    dialect = "sqlite"

    def __init__(self, path: Path, table: str) -> None:
        """Open the file read-only and untrusting."""
        self.conn = connect_sqlite(path)
        self.table = table
        self.ref = quote_ident(table)

    def columns(self) -> list[tuple[str, str]]:
        """Column names with their declared types."""
        rows = self.conn.execute(
            "SELECT name, type FROM pragma_table_info(?)", (self.table,)
        ).fetchall()
        if not rows:
            names = self.conn.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                "AND name NOT LIKE 'sqlite_%' ORDER BY name"
            ).fetchall()
            raise LookupError(f"no such table {self.table!r}; tables are {[n for (n,) in names]}")
        return [(str(n), str(t or "")) for n, t in rows]

    def _run(self, sql: str, timeout_s: float, limit: int | None) -> tuple[list[str], Rows]:
        import sqlite3

        deadline = time.monotonic() + timeout_s
        self.conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        try:
            cur = self.conn.execute(sql)
            columns = [str(d[0]) for d in cur.description or []]
            rows = cur.fetchmany(limit) if limit is not None else cur.fetchall()
        except sqlite3.OperationalError as exc:
            if "interrupted" in str(exc):
                raise QueryTimeout(str(exc)) from None
            raise
        finally:
            self.conn.set_progress_handler(None, 0)
            if self.conn.in_transaction:
                self.conn.rollback()
        return columns, [tuple(r) for r in rows]

    def fetch(self, sql: str, timeout_s: float, limit: int | None = None) -> Rows:
        """Run our SELECT."""
        return self._run(sql, timeout_s, limit)[1]

    def query(
        self, sql: str, names: Sequence[str], timeout_s: float, limit: int
    ) -> tuple[list[str], Rows]:
        """Run the model's statement on the read-only connection."""
        return self._run(with_names(sql, self.ref, names), timeout_s, limit)

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()
