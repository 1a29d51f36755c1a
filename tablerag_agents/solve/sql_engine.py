"""Run model-written SQL over DataFrames in a locked-down DuckDB inside a bounded worker.

The query never runs in the host process: it runs in a bounded worker
(:mod:`tablerag_agents.bounded`, task :mod:`tablerag_agents.tables.sql_task`)
whose address space and CPU time are capped by the kernel and whose wall clock
the host enforces, so a query that allocates past DuckDB's own
``memory_limit`` (strings are not counted there: ``repeat('x', 2000000000)``)
or that DuckDB cannot interrupt stops at those limits. There the security
boundary is DuckDB's own configuration: an in-memory connection with
``enable_external_access=false`` (no files, no network, no extension
install/load), extension autoloading off, no spill/home/extension/secret
directory, a memory and thread limit, and ``lock_configuration=true`` so the
query cannot turn any of that back on; DuckDB's metadata functions and views
are refused. A timer interrupts queries that run too long, and results are
capped in rows and cells. Checking that the text is a single SELECT is only a
courtesy that gives the model a clear error.

A session's tables travel to a worker once; its further queries send only text.

A table that stays where it lives (a database table, a file scanned out of
core) is queried through :class:`SourceSQL` instead: the same text check, then
the source's own read-only session (:mod:`tablerag_agents.tables.source_backends`)
in a bounded worker, with the same caps on the result.
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass
from typing import Any

import pandas as pd

from tablerag_agents.bounded.frames import decode_frame, encode_frame
from tablerag_agents.bounded.limits import MIB, WorkerLimits
from tablerag_agents.bounded.pool import WorkerPool, default_pool
from tablerag_agents.errors import TableRAGError, WorkerError, WorkerLimitError
from tablerag_agents.tables.source import QueryOutcome, TableSource
from tablerag_agents.tables.sql_safety import read_only_problem

SQL_TASK = "tablerag_agents.tables.sql_task"
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KB|KIB|MB|MIB|GB|GIB)?\s*$", re.IGNORECASE)
_UNITS = {"B": 1, "KB": 1000, "KIB": 1024, "MB": 1000**2, "MIB": MIB, "GB": 1000**3, "GIB": 1024**3}


def parse_size(text: str) -> int:
    """Bytes in a DuckDB size such as ``"512MB"`` or ``"1.5GiB"``.

    Raises:
        ValueError: For anything else.
    """
    match = _SIZE.match(text)
    if match is None:
        raise ValueError(f"not a size: {text!r} (use e.g. '512MB')")
    return int(float(match.group(1)) * _UNITS[(match.group(2) or "B").upper()])


class SQLRejectedError(TableRAGError):
    """The SQL text is not a single read-only query."""

    def __init__(self, sql: str, reason: str) -> None:
        self.sql = sql
        self.reason = reason
        super().__init__(f"SQL rejected: {reason}")


def sql_column_names(columns: list[Any]) -> list[str]:
    """Return unique, non-empty column names for SQL (``""`` -> ``col3``, dupes -> ``x_2``)."""
    out: list[str] = []
    for i, col in enumerate(columns):
        name = str(col).strip() or f"col{i + 1}"
        base, n = name, 2
        while name in out:
            name, n = f"{base}_{n}", n + 1
        out.append(name)
    return out


def check_read_only(sql: str) -> str:
    """Return ``sql`` if it is exactly one SELECT statement, else raise.

    Raises:
        SQLRejectedError: Empty text, several statements, a non-SELECT
            statement (COPY, ATTACH, INSTALL, PRAGMA, SET...), or one that reads
            DuckDB's metadata (``duckdb_settings()``, ``current_setting()``...).
    """
    problem = read_only_problem(sql)
    if problem is not None:
        raise SQLRejectedError(sql, problem)
    return sql


@dataclass
class SQLResult(QueryOutcome):
    """Outcome of one query, rows (capped) or an error, as the solvers read it."""

    def frame(self) -> pd.DataFrame:
        """Return the rows as a DataFrame (duplicate names made unique)."""
        return pd.DataFrame(self.rows, columns=sql_column_names(list(self.columns)))

    def observation(self, max_rows: int = 20, max_chars: int = 1500) -> str:
        """Text for the model: the result table, or the error."""
        if not self.ok:
            return f"Error ({self.error_type}): {self.error}"
        if not self.rows:
            return "(no rows)"
        lines = [" | ".join(self.columns)]
        lines += [" | ".join(_fmt(v) for v in row) for row in self.rows[:max_rows]]
        more = len(self.rows) - max_rows
        if more > 0 or self.truncated:
            lines.append(f"... ({'more than ' if self.truncated else ''}{len(self.rows)} rows)")
        text = "\n".join(lines)
        return text if len(text) <= max_chars else text[: max_chars - 3] + "..."


def _fmt(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "NULL" if value is None else str(value)


class SafeDuckDB:
    """Run read-only SQL over a fixed set of DataFrames, in a bounded worker.

    Thread-safe: concurrent queries use separate workers. The tables are sent to
    a worker with the first query that worker gets for this engine, then kept
    there (``tables_sent`` counts the sends).

    Args:
        tables: Table name -> DataFrame; each becomes an in-memory table.
        timeout_s: Wall-clock limit per query (DuckDB is interrupted; the worker is
            killed a few seconds later if that does not stop it).
        max_rows: Maximum rows returned.
        max_cells: Maximum cells (rows x columns) returned.
        memory_limit: DuckDB's memory limit; the worker's address space may grow by
            twice that plus 256 MB (and three times the tables when they are sent).
        aliases: Extra name -> table name; each becomes a view (e.g. the table id
            beside the short name ``t``).
        pool: The worker pool (default: the process-wide one).
    """

    def __init__(
        self,
        tables: dict[str, pd.DataFrame],
        *,
        timeout_s: float = 5.0,
        max_rows: int = 200,
        max_cells: int = 5000,
        memory_limit: str = "512MB",
        aliases: dict[str, str] | None = None,
        pool: WorkerPool | None = None,
    ) -> None:
        """Keep copies of the tables with SQL-safe unique column names."""
        self.tables: dict[str, pd.DataFrame] = {}
        for name, df in tables.items():
            frame = df.copy()
            frame.columns = sql_column_names(list(frame.columns))
            self.tables[name] = frame
        self.aliases = {a: n for a, n in (aliases or {}).items() if a not in self.tables}
        unknown = set(self.aliases.values()) - set(self.tables)
        if unknown:
            raise ValueError(f"aliases point to unknown tables {sorted(unknown)}")
        self.timeout_s = timeout_s
        self.max_rows = max_rows
        self.max_cells = max_cells
        self.memory_limit = memory_limit
        self.memory_bytes = 2 * parse_size(memory_limit) + 256 * MIB
        self.pool = pool or default_pool()
        self.pool.prewarm()  # the model writes the first query meanwhile
        self.session = uuid.uuid4().hex
        self.tables_sent = 0

    def _payload(self) -> tuple[list[dict[str, Any]], bytes]:
        """The tables as Arrow IPC (with their real column names beside)."""
        entries: list[dict[str, Any]] = []
        parts: list[bytes] = []
        for name, frame in self.tables.items():
            positional = frame.set_axis([str(i) for i in range(frame.shape[1])], axis=1)
            data, tagged = encode_frame(positional)
            entries.append(
                {"name": name, "columns": list(frame.columns), "size": len(data), "tagged": tagged}
            )
            parts.append(data)
        return entries, b"".join(parts)

    def _limits(self, blob_bytes: int) -> WorkerLimits:
        # Sending and loading the tables takes time and memory too.
        transfer_s = blob_bytes / (50 * MIB)
        return WorkerLimits(
            memory_bytes=self.memory_bytes + 3 * blob_bytes,
            cpu_seconds=self.timeout_s + 2 + transfer_s,
            wall_seconds=self.timeout_s + 5 + 2 * transfer_s,
        )

    def run(self, sql: str) -> SQLResult:
        """Run one SELECT; errors, rejections, timeouts and limits come back as a failed result."""
        started = time.perf_counter()
        sql = sql.strip().rstrip(";").strip()
        try:
            check_read_only(sql)
        except SQLRejectedError as exc:
            return SQLResult(ok=False, error=exc.reason, error_type="SQLRejectedError")
        args: dict[str, Any] = {
            "session": self.session,
            "sql": sql,
            "timeout": self.timeout_s,
            "max_rows": self.max_rows,
            "max_cells": self.max_cells,
            "memory_limit": self.memory_limit,
            "aliases": self.aliases,
        }
        try:
            with self.pool.lease(prefer=self.session) as worker:
                for _ in range(2):  # a second time with the tables if the worker lost them
                    blob = b""
                    if self.session not in worker.keys:
                        args["tables"], blob = self._payload()
                        self.tables_sent += 1
                    limits = self._limits(len(blob))
                    reply, data = worker.call(SQL_TASK, args, limits, blob)
                    args.pop("tables", None)
                    if not reply.get("ok"):
                        raise WorkerError(f"{reply.get('error_type')}: {reply.get('error')}")
                    outcome = reply["result"]
                    worker.keys = set(outcome.get("sessions", []))
                    if not outcome.get("missing"):
                        break
        except WorkerLimitError as exc:
            return self._breach(exc, started)
        except WorkerError as exc:
            return SQLResult(
                ok=False,
                error=str(exc)[:500],
                error_type="WorkerError",
                seconds=time.perf_counter() - started,
            )
        return self._result(outcome, data, started)

    def _breach(self, exc: WorkerLimitError, started: float) -> SQLResult:
        timed_out = exc.limit != "memory"
        return SQLResult(
            ok=False,
            error=f"query exceeded the {exc.limit} limit of {exc.value}",
            error_type="Timeout" if timed_out else "MemoryLimit",
            timed_out=timed_out,
            seconds=time.perf_counter() - started,
        )

    def _result(self, outcome: dict[str, Any], data: bytes, started: float) -> SQLResult:
        seconds = time.perf_counter() - started
        if outcome.get("timed_out"):
            return SQLResult(
                ok=False,
                error=f"query exceeded the {self.timeout_s:g}s time limit",
                error_type="Timeout",
                timed_out=True,
                seconds=seconds,
            )
        if not outcome.get("ok"):
            error = str(outcome.get("error") or "")
            if outcome.get("error_type") == "MemoryLimit":
                error = f"query exceeded the memory limit of {self.memory_limit}: {error}"
            return SQLResult(
                ok=False, error=error, error_type=outcome.get("error_type"), seconds=seconds
            )
        columns = [str(c) for c in outcome["columns"]]
        frame = decode_frame(data, list(outcome["tagged"]), max_cells=self.max_cells + 1)
        rows = list(frame.itertuples(index=False, name=None)) if columns else []
        return SQLResult(
            ok=True,
            columns=columns,
            rows=[tuple(_plain(v) for v in row) for row in rows],
            truncated=bool(outcome["truncated"]),
            seconds=seconds,
        )


class SourceSQL:
    """Run read-only SQL on a :class:`~tablerag_agents.tables.source.TableSource` in place.

    Same interface and caps as :class:`SafeDuckDB`; the table is never copied.

    Args:
        source: The table where it lives.
        names: Names the query may use for it besides its own (``t``, the table id).
        timeout_s: Time limit per query (the database's statement timeout).
        max_rows: Maximum rows returned.
        max_cells: Maximum cells returned.
    """

    def __init__(
        self,
        source: TableSource,
        names: list[str],
        *,
        timeout_s: float = 5.0,
        max_rows: int = 200,
        max_cells: int = 5000,
    ) -> None:
        """Store the source and limits."""
        self.source = source
        self.names = list(dict.fromkeys(names))
        self.timeout_s = timeout_s
        self.max_rows = max_rows
        self.max_cells = max_cells

    def run(self, sql: str) -> SQLResult:
        """Run one SELECT; errors, rejections and timeouts come back as a failed result."""
        sql = sql.strip().rstrip(";").strip()
        try:
            check_read_only(sql)
        except SQLRejectedError as exc:
            return SQLResult(ok=False, error=exc.reason, error_type="SQLRejectedError")
        outcome = self.source.query(
            sql,
            names=self.names,
            timeout_s=self.timeout_s,
            max_rows=self.max_rows,
            max_cells=self.max_cells,
        )
        return _from_outcome(outcome)


def _from_outcome(outcome: QueryOutcome) -> SQLResult:
    return SQLResult(**vars(outcome))


def _plain(value: Any) -> Any:
    """A cell as DuckDB's Python client gives it (NaN-free: missing is None)."""
    return None if value is pd.NA or value is pd.NaT else value
