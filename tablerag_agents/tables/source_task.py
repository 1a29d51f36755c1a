"""The bounded worker's ``source`` task: a table that stays in its database or file.

The host (:mod:`tablerag_agents.tables.source_remote`) names the table with a
JSON spec (a database URL and table, or a file and its format); the worker
opens it once per session (the last :data:`MAX_SESSIONS` stay open) and runs
one operation per call: ``describe``, ``profile``, ``sample`` or ``query``.
Only aggregates, a bounded sample or a capped result come back, under the
worker's memory and CPU limits (:mod:`tablerag_agents.bounded`).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import asdict
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd

from tablerag_agents.bounded.frames import encode_frame
from tablerag_agents.tables.source import ProfileRequest, kind_of_sql_type
from tablerag_agents.tables.source_backends import (
    Backend,
    PostgresBackend,
    QueryTimeout,
    SQLiteBackend,
)
from tablerag_agents.tables.source_duckdb import DuckFileBackend
from tablerag_agents.tables.source_profile import Profiler

#: Sessions whose connections a worker keeps open.
MAX_SESSIONS = 4

_sessions: OrderedDict[str, Backend] = OrderedDict()


def open_backend(spec: dict[str, Any]) -> Backend:
    """Open the table ``spec`` names (see :mod:`tablerag_agents.tables.source_remote`)."""
    kind = spec["kind"]
    if kind == "postgresql":
        return PostgresBackend(str(spec["conninfo"]), str(spec["table"]), spec.get("schema"))
    if kind == "sqlite":
        return SQLiteBackend(Path(spec["path"]), str(spec["table"]))
    if kind == "file":
        return DuckFileBackend(
            Path(spec["path"]),
            str(spec["format"]),
            memory_mb=int(spec["memory_mb"]),
            query_memory_mb=int(spec["query_memory_mb"]),
            threads=int(spec["threads"]),
        )
    raise ValueError(f"unknown source kind {kind!r}")


def _backend(session: str, spec: dict[str, Any]) -> Backend:
    backend = _sessions.get(session)
    if backend is None:
        backend = open_backend(spec)
        _sessions[session] = backend
        while len(_sessions) > MAX_SESSIONS:
            _sessions.popitem(last=False)[1].close()
    _sessions.move_to_end(session)
    return backend


def _plain(value: Any) -> Any:
    """Decimals as floats (as pandas would type a numeric column)."""
    return float(value) if isinstance(value, Decimal) else value


def _frame(columns: list[str], rows: list[tuple[Any, ...]], typed: bool) -> pd.DataFrame:
    """Rows as a frame with positional labels (names may repeat); ``typed`` infers dtypes."""
    data = [tuple(_plain(v) for v in row) for row in rows]
    frame = pd.DataFrame(data, columns=range(len(columns)), dtype=None if typed else object)
    if typed:
        frame = frame.infer_objects()
    return frame.set_axis([str(i) for i in range(len(columns))], axis=1)


def _describe(backend: Backend) -> dict[str, Any]:
    return {"columns": [[n, kind_of_sql_type(t), t] for n, t in backend.columns()]}


def _profile(backend: Backend, args: dict[str, Any]) -> dict[str, Any]:
    timeout = float(args["timeout"])
    approximate = False
    if backend.dialect == "duckdb":
        (count,) = backend.fetch(f"SELECT count(*) FROM {backend.ref}", timeout)
        approximate = int(count[0]) > int(args["exact_distinct_rows"])
    profiler = Profiler(
        backend,
        ProfileRequest(**args["request"]),
        timeout_s=timeout,
        approximate=approximate,
        max_exact_distinct=int(args["max_exact_distinct"]),
        prefix_rows=int(args["prefix_rows"]),
    )
    n_rows, profiles = profiler.run()
    return {"n_rows": n_rows, "profiles": [asdict(p) for p in profiles]}


def _sample(backend: Backend, args: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    names = [n for n, _ in backend.columns()]
    n = int(args["n"])
    rows = backend.fetch(f"SELECT * FROM {backend.ref} LIMIT {n}", float(args["timeout"]), n)
    data, tagged = encode_frame(_frame(names, rows, typed=True))
    return {"columns": names, "tagged": tagged}, data


def _query(backend: Backend, args: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    """The model's statement; every failure comes back as data."""
    timeout = float(args["timeout"])
    try:
        # One row is enough to learn the width; the cap in rows follows from it.
        columns, rows = backend.query(
            str(args["sql"]), list(args["names"]), timeout, int(args["max_rows"]) + 1
        )
    except QueryTimeout:
        return {"ok": False, "timed_out": True, "error_type": "Timeout"}, b""
    except PermissionError as exc:
        return {"ok": False, "error": str(exc)[:500], "error_type": "SQLRejectedError"}, b""
    except Exception as exc:  # noqa: BLE001 - the database's error goes to the model
        if isinstance(exc, MemoryError):
            raise
        message = str(exc).split("\n\nLINE")[0].strip()
        return {"ok": False, "error": message[:500], "error_type": type(exc).__name__}, b""
    limit = max(1, min(int(args["max_rows"]), int(args["max_cells"]) // max(1, len(columns))))
    data, tagged = encode_frame(_frame(columns, rows[:limit], typed=False))
    return {"ok": True, "columns": columns, "truncated": len(rows) > limit, "tagged": tagged}, data


def run(args: dict[str, Any], blob: bytes) -> tuple[dict[str, Any], bytes]:
    """Run one operation on session ``args["session"]`` (opened from ``args["spec"]``).

    Returns:
        The operation's result (with ``sessions``: the sessions this worker
        holds) and its rows as Arrow IPC, if any.
    """
    started = time.perf_counter()
    op = args["op"]
    data = b""
    if op == "close":
        closed = _sessions.pop(str(args["session"]), None)
        if closed is not None:
            closed.close()
        return {"sessions": list(_sessions)}, data
    session = str(args["session"])
    backend = _backend(session, dict(args["spec"]))
    if op == "describe":
        try:
            result = _describe(backend)
        except Exception:
            _sessions.pop(session, None)  # a table that cannot be described is not kept
            backend.close()
            raise
    elif op == "profile":
        result = _profile(backend, args)
    elif op == "sample":
        result, data = _sample(backend, args)
    elif op == "query":
        result, data = _query(backend, args)
    else:
        raise ValueError(f"unknown source operation {op!r}")
    result["seconds"] = time.perf_counter() - started
    result["sessions"] = list(_sessions)
    return result, data
