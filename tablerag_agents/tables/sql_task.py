"""The bounded worker's ``sql`` task: read-only SQL over tables, in a locked DuckDB.

The host (:class:`~tablerag_agents.solve.sql_engine.SafeDuckDB`) sends a
session's tables once; the worker keeps them in a locked in-memory DuckDB
connection (the last :data:`MAX_SESSIONS` sessions), so every further query of
that session sends only its text. Each query runs under the worker's memory and
CPU limits, DuckDB's own memory limit, and a timer that interrupts it.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any

import duckdb
import pandas as pd

from tablerag_agents.bounded.frames import decode_frame, encode_frame
from tablerag_agents.tables.sql_safety import (
    DUCKDB_UNTRUSTED_CONFIG,
    lock_duckdb,
    quote_ident,
    read_only_problem,
)

#: Sessions whose tables a worker keeps.
MAX_SESSIONS = 2

_sessions: OrderedDict[str, duckdb.DuckDBPyConnection] = OrderedDict()


def locked_connection(
    tables: dict[str, pd.DataFrame], aliases: dict[str, str], memory_limit: str
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB holding ``tables`` (and alias views), its configuration locked."""
    config = dict(DUCKDB_UNTRUSTED_CONFIG, threads=1, memory_limit=memory_limit)
    con = duckdb.connect(":memory:", config=config)
    for i, (name, frame) in enumerate(tables.items()):
        view = f"__src_{i}"
        con.register(view, frame)
        con.execute(f"CREATE TABLE {quote_ident(name)} AS SELECT * FROM {view}")
        con.unregister(view)
    for alias, name in aliases.items():
        con.execute(f"CREATE VIEW {quote_ident(alias)} AS SELECT * FROM {quote_ident(name)}")
    lock_duckdb(con)
    return con


def _open(args: dict[str, Any], blob: bytes) -> duckdb.DuckDBPyConnection:
    """Build the session's connection from the tables in ``blob``."""
    tables: dict[str, pd.DataFrame] = {}
    view = memoryview(blob)
    offset = 0
    for entry in args["tables"]:
        size = int(entry["size"])
        frame = decode_frame(view[offset : offset + size], list(entry["tagged"]))
        tables[str(entry["name"])] = frame.set_axis(list(entry["columns"]), axis=1)
        offset += size
    if offset != len(blob):
        raise ValueError("table blob size does not match its entries")
    return locked_connection(tables, dict(args.get("aliases") or {}), str(args["memory_limit"]))


def _query(con: duckdb.DuckDBPyConnection, args: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    sql = str(args["sql"])
    problem = read_only_problem(sql)
    if problem is not None:
        return {"ok": False, "error": problem, "error_type": "SQLRejectedError"}, b""
    timeout = float(args["timeout"])
    timer = threading.Timer(timeout, con.interrupt)
    timer.start()
    try:
        cursor = con.execute(sql)
        columns = [str(d[0]) for d in cursor.description or []]
        limit = max(1, min(int(args["max_rows"]), int(args["max_cells"]) // max(1, len(columns))))
        rows = cursor.fetchmany(limit + 1)
    except duckdb.InterruptException:
        return {"ok": False, "timed_out": True, "error_type": "Timeout"}, b""
    except duckdb.OutOfMemoryException as exc:
        first = str(exc).split("\n")[0].strip()
        return {"ok": False, "error": first[:500], "error_type": "MemoryLimit"}, b""
    except duckdb.Error as exc:
        message = str(exc).split("\n\nLINE")[0].strip()
        return {"ok": False, "error": message[:500], "error_type": type(exc).__name__}, b""
    finally:
        timer.cancel()
    frame = pd.DataFrame(
        [tuple(r) for r in rows[:limit]], columns=range(len(columns)), dtype=object
    )
    data, tagged = encode_frame(frame.set_axis([str(i) for i in range(len(columns))], axis=1))
    return {"ok": True, "columns": columns, "truncated": len(rows) > limit, "tagged": tagged}, data


def run(args: dict[str, Any], blob: bytes) -> tuple[dict[str, Any], bytes]:
    """Run one query of session ``args["session"]`` (building it from ``blob`` if sent).

    Returns:
        The outcome (``ok``, ``columns``, ``truncated`` or ``error``), the sessions this
        worker holds, and the rows as Arrow IPC.
    """
    started = time.perf_counter()
    session = str(args["session"])
    if args.get("tables") is not None:
        old = _sessions.pop(session, None)
        if old is not None:
            old.close()
        _sessions[session] = _open(args, blob)
        while len(_sessions) > MAX_SESSIONS:
            _sessions.popitem(last=False)[1].close()
    con = _sessions.get(session)
    if con is None:
        outcome: dict[str, Any] = {"ok": False, "missing": True}
        data = b""
    else:
        _sessions.move_to_end(session)
        outcome, data = _query(con, args)
    outcome["seconds"] = time.perf_counter() - started
    outcome["sessions"] = list(_sessions)
    return outcome, data
