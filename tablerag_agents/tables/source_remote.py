"""Sources whose work runs in a bounded worker: a database table and a big CSV/Parquet file.

The host never holds a database connection or a DuckDB scan: each call goes to
a worker of :func:`~tablerag_agents.bounded.pool.default_pool` (task
:mod:`tablerag_agents.tables.source_task`) under memory, CPU and wall-clock
limits, and only aggregates, a bounded sample or a capped result come back.
"""

from __future__ import annotations

import importlib.util
import time
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pandas as pd

from tablerag_agents.bounded.frames import decode_frame
from tablerag_agents.bounded.limits import MIB, WorkerLimits
from tablerag_agents.bounded.pool import WorkerPool, default_pool
from tablerag_agents.errors import TableLimitError, TableLoadError, WorkerError, WorkerLimitError
from tablerag_agents.tables.source import (
    ColumnProfile,
    ProfileRequest,
    QueryOutcome,
    SourceSettings,
    TableSource,
)
from tablerag_agents.tables.values import ColumnKind

SOURCE_TASK = "tablerag_agents.tables.source_task"

#: File formats DuckDB scans out of core.
FILE_FORMATS = {".csv": "csv", ".tsv": "csv", ".parquet": "parquet", ".pq": "parquet"}


class WorkerSource(TableSource):
    """A :class:`TableSource` whose operations run in a bounded worker.

    Args:
        spec: What the worker opens (JSON; see ``source_task.open_backend``).
        name: The table's name in SQL.
        label: Shown in errors (no password).
        settings: Limits (default: from the environment).
        pool: The worker pool (default: the process-wide one).
    """

    def __init__(
        self,
        spec: dict[str, Any],
        *,
        name: str,
        label: str,
        settings: SourceSettings | None = None,
        pool: WorkerPool | None = None,
    ) -> None:
        """Open the table once in a worker to learn its columns."""
        self.spec = spec
        self.name = name
        self.label = label
        self.settings = settings or SourceSettings()
        self.pool = pool or default_pool()
        self.session = uuid.uuid4().hex
        self._n_rows: int | None = None
        result, _ = self._call("describe", {}, self._limits(120.0, self._duckdb_mb()))
        self._columns: list[tuple[str, ColumnKind]] = [(str(n), k) for n, k, _ in result["columns"]]
        self.sql_types = {str(n): str(t) for n, _, t in result["columns"]}
        if not self._columns:
            raise TableLoadError(label, "the table has no columns")

    def _limits(self, seconds: float, duckdb_mb: int) -> WorkerLimits:
        memory = (2 * duckdb_mb + self.settings.worker_memory_mb) * MIB
        return WorkerLimits(memory_bytes=memory, cpu_seconds=seconds, wall_seconds=seconds + 10)

    def _duckdb_mb(self, query: bool = False) -> int:
        if self.spec["kind"] != "file":
            return 0
        return self.settings.query_memory_mb if query else self.settings.memory_mb

    def _call(
        self, op: str, args: dict[str, Any], limits: WorkerLimits
    ) -> tuple[dict[str, Any], bytes]:
        """Run ``op`` in a worker (one already holding this session if idle)."""
        payload = {"op": op, "session": self.session, "spec": self.spec, **args}
        with self.pool.lease(prefer=self.session) as worker:
            reply, data = worker.call(SOURCE_TASK, payload, limits)
            if not reply.get("ok"):
                worker.keys.discard(self.session)
                raise TableLoadError(self.label, f"{reply.get('error_type')}: {reply.get('error')}")
            result: dict[str, Any] = reply["result"]
            worker.keys = set(result.get("sessions", []))
        return result, data

    def columns(self) -> list[tuple[str, ColumnKind]]:
        """Column names and kinds."""
        return list(self._columns)

    def n_rows(self) -> int:
        """Rows, counted once (``SELECT count(*)``)."""
        if self._n_rows is None:
            query = self.query(
                "SELECT count(*) FROM _tablerag_rows",
                names=["_tablerag_rows"],
                timeout_s=self.settings.profile_seconds,
                max_rows=1,
                max_cells=1,
            )
            if not query.ok:
                raise TableLoadError(self.label, f"cannot count the rows: {query.error}")
            self._n_rows = int(query.rows[0][0])
        return self._n_rows

    def profile(self, request: ProfileRequest) -> list[ColumnProfile]:
        """Per-column aggregates for the schema and cell databases (pushed down).

        Raises:
            TableLimitError: Profiling went past a time or memory limit.
        """
        seconds = self.settings.profile_seconds
        args = {
            "request": asdict(request),
            "timeout": seconds,
            "max_exact_distinct": self.settings.max_exact_distinct,
            "prefix_rows": self.settings.prefix_rows,
            "exact_distinct_rows": self.settings.exact_distinct_rows,
        }
        try:
            result, _ = self._call("profile", args, self._limits(seconds, self._duckdb_mb()))
        except WorkerLimitError as exc:
            raise TableLimitError(self.label, exc.limit, exc.value, "while profiling") from None
        self._n_rows = int(result["n_rows"])
        return [_profile(p) for p in result["profiles"]]

    def sample(self, n: int) -> pd.DataFrame:
        """The first ``n`` rows (column names as the source has them)."""
        try:
            result, data = self._call(
                "sample",
                {"n": n, "timeout": 60.0},
                self._limits(60.0, self._duckdb_mb(query=True)),
            )
        except WorkerLimitError as exc:
            raise TableLimitError(self.label, exc.limit, exc.value, "while sampling") from None
        frame = decode_frame(data, list(result["tagged"]))
        return frame.set_axis(list(result["columns"]), axis=1)

    def query(
        self,
        sql: str,
        *,
        names: list[str],
        timeout_s: float,
        max_rows: int,
        max_cells: int,
    ) -> QueryOutcome:
        """Run one statement read-only (see :meth:`TableSource.query`); failures are data."""
        started = time.perf_counter()
        args = {
            "sql": sql,
            "names": [n for n in names if n != self.name or self.spec["kind"] == "file"],
            "timeout": timeout_s,
            "max_rows": max_rows,
            "max_cells": max_cells,
        }
        limits = WorkerLimits(
            memory_bytes=(2 * self._duckdb_mb(query=True) + self.settings.worker_memory_mb) * MIB,
            cpu_seconds=timeout_s + 2,
            wall_seconds=timeout_s + 5,
        )
        try:
            result, data = self._call("query", args, limits)
        except WorkerLimitError as exc:
            timed_out = exc.limit != "memory"
            return QueryOutcome(
                ok=False,
                error=f"query exceeded the {exc.limit} limit of {exc.value}",
                error_type="Timeout" if timed_out else "MemoryLimit",
                timed_out=timed_out,
                seconds=time.perf_counter() - started,
            )
        except (TableLoadError, WorkerError) as exc:
            return QueryOutcome(
                ok=False,
                error=str(exc)[:500],
                error_type="WorkerError",
                seconds=time.perf_counter() - started,
            )
        seconds = time.perf_counter() - started
        if result.get("timed_out"):
            return QueryOutcome(
                ok=False,
                error=f"query exceeded the {timeout_s:g}s time limit",
                error_type="Timeout",
                timed_out=True,
                seconds=seconds,
            )
        if not result.get("ok"):
            return QueryOutcome(
                ok=False,
                error=str(result.get("error") or ""),
                error_type=result.get("error_type"),
                seconds=seconds,
            )
        columns = [str(c) for c in result["columns"]]
        frame = decode_frame(data, list(result["tagged"]), max_cells=max_cells + 1)
        rows = list(frame.itertuples(index=False, name=None)) if columns else []
        return QueryOutcome(
            ok=True,
            columns=columns,
            rows=[tuple(None if v is pd.NA or v is pd.NaT else v for v in r) for r in rows],
            truncated=bool(result["truncated"]),
            seconds=seconds,
        )

    def close(self) -> None:
        """Close the worker's connection (if the worker holding it is idle)."""
        try:
            self._call("close", {}, self._limits(30.0, 0))
        except (TableLoadError, WorkerError, WorkerLimitError):
            pass


def _profile(data: dict[str, Any]) -> ColumnProfile:
    cells = data.get("cells")
    return ColumnProfile(
        **{
            **data,
            "examples": tuple(data.get("examples") or ()),
            "cells": None if cells is None else tuple((str(v), int(n)) for v, n in cells),
        }
    )


_MALFORMED = (
    "write it as dialect://user:password@host:port/database, with '@', ':' and '/' in "
    "the password percent-encoded (%40, %3A, %2F)"
)


class DatabaseSource(WorkerSource):
    """A table in PostgreSQL or SQLite, named by a SQLAlchemy URL and its table name.

    ``table`` may be ``schema.table`` (PostgreSQL). Other databases are refused:
    only these two have the read-only session and statement timeout the SQL
    solver relies on.

    Raises:
        TableLoadError: An unsupported or malformed URL, a missing SQLite file,
            an unknown table, or a database that refuses the connection.
    """

    def __init__(
        self,
        url: str,
        table: str,
        *,
        settings: SourceSettings | None = None,
        pool: WorkerPool | None = None,
    ) -> None:
        """Parse the URL and open the table in a worker."""
        try:
            from sqlalchemy.engine import make_url
            from sqlalchemy.exc import ArgumentError
        except ImportError:
            raise TableLoadError(
                table, "database URLs need SQLAlchemy: pip install 'tablerag-agents[db]'"
            ) from None

        try:
            parsed = make_url(url)
        except ArgumentError as exc:
            raise TableLoadError("<url>", f"not a database URL: {exc}") from None
        except ValueError:  # a bad port; its text may hold a piece of a password
            raise TableLoadError("<url>", f"not a database URL: {_MALFORMED}") from None
        if "@" in (parsed.host or ""):  # an unencoded '@' in the password: part of it is here
            raise TableLoadError("<url>", f"not a database URL: {_MALFORMED}")
        label = f"{parsed.render_as_string(hide_password=True)}#{table}"
        backend = parsed.get_backend_name()
        if backend == "postgresql":
            if importlib.util.find_spec("psycopg") is None:
                raise TableLoadError(
                    label, "PostgreSQL needs psycopg: pip install 'tablerag-agents[db]'"
                )
            schema, _, bare = table.rpartition(".")
            spec: dict[str, Any] = {
                "kind": "postgresql",
                "conninfo": parsed.set(drivername="postgresql").render_as_string(
                    hide_password=False
                ),
                "table": bare,
                "schema": schema or None,
            }
            name = bare
        elif backend == "sqlite":
            if not parsed.database or parsed.database == ":memory:":
                raise TableLoadError(label, "a sqlite:/// URL must name a database file")
            path = Path(parsed.database).resolve()
            if not path.is_file():
                raise TableLoadError(label, f"no SQLite file at {path}")
            spec = {"kind": "sqlite", "path": str(path), "table": table}
            name = table
        else:
            raise TableLoadError(
                label, f"unsupported database {backend!r}: use a postgresql:// or sqlite:// URL"
            )
        super().__init__(spec, name=name, label=label, settings=settings, pool=pool)


class FileSource(WorkerSource):
    """A CSV or Parquet file scanned out of core by DuckDB (memory bounded by settings).

    Raises:
        TableLoadError: A missing file, an unknown format, or one DuckDB cannot read.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        name: str | None = None,
        format: str | None = None,
        settings: SourceSettings | None = None,
        pool: WorkerPool | None = None,
    ) -> None:
        """Check the file and open it in a worker."""
        file = Path(path).resolve()
        if not file.is_file():
            raise TableLoadError(file, "no such file")
        fmt = format or FILE_FORMATS.get(file.suffix.lower())
        if fmt not in ("csv", "parquet"):
            raise TableLoadError(file, "only CSV and Parquet files are scanned out of core")
        settings = settings or SourceSettings()
        spec = {
            "kind": "file",
            "path": str(file),
            "format": fmt,
            "memory_mb": settings.memory_mb,
            "query_memory_mb": settings.query_memory_mb,
            "threads": settings.threads,
        }
        label = str(file)
        super().__init__(spec, name=name or file.stem, label=label, settings=settings, pool=pool)
