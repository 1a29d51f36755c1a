"""Connections of the ``source`` worker task: PostgreSQL, SQLite and a DuckDB-scanned file.

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
- A CSV/Parquet file: an in-memory DuckDB with external access off except for
  ``allowed_paths`` = that one file, no spill directory, a memory limit and the
  configuration locked; a view over the file is created after that, so the
  model's SQL can read that file and nothing else. Our own profiling runs on a
  separate connection that may spill to a private temporary folder.

The model's table name ``t`` (and the table id) are views (DuckDB) or a
``WITH`` clause put in front of the query (databases), which keeps the
statement's kind: a write statement still reaches the read-only session.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tablerag_agents.tables.db_readers import connect_sqlite
from tablerag_agents.tables.sql_safety import (
    DUCKDB_UNTRUSTED_CONFIG,
    lock_duckdb,
    quote_ident,
    quote_literal,
    read_only_problem,
)

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


class DuckFileBackend(Backend):
    """A CSV or Parquet file scanned by DuckDB, never loaded whole."""

    dialect = "duckdb"

    def __init__(
        self, path: Path, fmt: str, *, memory_mb: int, query_memory_mb: int, threads: int
    ) -> None:
        """Remember the file; connections open on first use."""
        reader = {"parquet": "read_parquet", "csv": "read_csv"}[fmt]
        self.path = path
        self.ref = f"{reader}({quote_literal(str(path))})"
        self.memory_mb = memory_mb
        self.query_memory_mb = query_memory_mb
        self.threads = threads
        self._profile: Any = None
        self._spill: str | None = None
        self._locked: Any = None
        self._views: set[str] = set()
        self._described: list[tuple[str, str]] | None = None

    def _profile_connection(self) -> Any:
        """Our own connection: may spill to a private temporary folder."""
        import duckdb

        if self._profile is None:
            self._spill = tempfile.mkdtemp(prefix="tablerag-spill-")
            config: dict[str, Any] = {
                "memory_limit": f"{self.memory_mb}MB",
                "threads": self.threads,
                "temp_directory": self._spill,
                "preserve_insertion_order": True,
                "autoinstall_known_extensions": False,
                "autoload_known_extensions": False,
            }
            self._profile = duckdb.connect(":memory:", config=config)
        return self._profile

    def _locked_connection(self) -> Any:
        """The model's connection: external access off but for this one file, locked."""
        import duckdb

        if self._locked is None:
            config = dict(DUCKDB_UNTRUSTED_CONFIG)
            del config["enable_external_access"]  # after allowed_paths, below
            config.update(memory_limit=f"{self.query_memory_mb}MB", threads=self.threads)
            con = duckdb.connect(":memory:", config=config)
            con.execute(f"SET allowed_paths = [{quote_literal(str(self.path))}]")
            con.execute("SET enable_external_access = false")
            lock_duckdb(con)
            self._locked = con
        return self._locked

    def columns(self) -> list[tuple[str, str]]:
        """Column names and DuckDB types of the file."""
        if self._described is None:
            rows = self._profile_connection().execute(f"DESCRIBE SELECT * FROM {self.ref}")
            self._described = [(str(r[0]), str(r[1])) for r in rows.fetchall()]
        return self._described

    def _timed(self, con: Any, timeout_s: float, run: Callable[[], Any]) -> Any:
        import duckdb

        timer = threading.Timer(timeout_s, con.interrupt)
        timer.start()
        try:
            return run()
        except duckdb.InterruptException:
            raise QueryTimeout(f"interrupted after {timeout_s:g}s") from None
        finally:
            timer.cancel()

    def fetch(self, sql: str, timeout_s: float, limit: int | None = None) -> Rows:
        """Run our SELECT on the profiling connection."""
        con = self._profile_connection()

        def run() -> Rows:
            cur = con.execute(sql)
            return [tuple(r) for r in (cur.fetchmany(limit) if limit else cur.fetchall())]

        return self._timed(con, timeout_s, run)  # type: ignore[no-any-return]

    def query(
        self, sql: str, names: Sequence[str], timeout_s: float, limit: int
    ) -> tuple[list[str], Rows]:
        """Run the model's SELECT on the locked connection (metadata refused in here too)."""
        problem = read_only_problem(sql)
        if problem is not None:
            raise PermissionError(problem)
        con = self._locked_connection()
        for name in names:
            if name not in self._views:
                view = f"CREATE OR REPLACE VIEW {quote_ident(name)} AS SELECT * FROM {self.ref}"
                con.execute(view)
                self._views.add(name)

        def run() -> tuple[list[str], Rows]:
            cur = con.execute(sql)
            columns = [str(d[0]) for d in cur.description or []]
            return columns, [tuple(r) for r in cur.fetchmany(limit)]

        return self._timed(con, timeout_s, run)  # type: ignore[no-any-return]

    def count_distinct(self, expr: str, approximate: bool) -> str:
        """HyperLogLog on big files (constant memory), exact otherwise."""
        return f"approx_count_distinct({expr})" if approximate else f"count(DISTINCT {expr})"

    def as_text(self, expr: str) -> str:
        """``expr`` cast to VARCHAR."""
        return f"CAST({expr} AS VARCHAR)"

    def close(self) -> None:
        """Close both connections and remove the spill folder."""
        for con in (self._profile, self._locked):
            if con is not None:
                con.close()
        self._profile = self._locked = None
        if self._spill is not None:
            shutil.rmtree(self._spill, ignore_errors=True)
            self._spill = None
