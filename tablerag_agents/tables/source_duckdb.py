"""The ``source`` worker task's connection to a CSV or Parquet file, scanned by DuckDB.

The file is never loaded: DuckDB reads it where it is, under a memory limit.
Two connections: our own profiling queries run on one that may spill to a
private temporary folder; the model's SQL runs on an in-memory DuckDB with
external access off except for ``allowed_paths`` = that one file, no spill
directory, a memory limit and the configuration locked (checked with DuckDB
2.0: a view made before external access is turned off fails at its first
scan, one over an allowed path works, and ``read_csv('/etc/passwd')`` or any
other file is refused). The views ``t`` and the table id over the file are
created after the lock, so the model's SQL reads that file and nothing else.
DuckDB's metadata functions are refused as for every model query
(:func:`~tablerag_agents.tables.sql_safety.read_only_problem`).
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tablerag_agents.tables.source_backends import Backend, QueryTimeout, Rows
from tablerag_agents.tables.sql_safety import (
    DUCKDB_UNTRUSTED_CONFIG,
    lock_duckdb,
    quote_ident,
    quote_literal,
    read_only_problem,
)


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
