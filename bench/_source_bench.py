"""Shared parts of bench/huge_table.py and bench/postgres_table.py (bench helper).

Both measure a table that stays where it lives (a Parquet file scanned by
DuckDB, a PostgreSQL table): the schema/cell index build (pushed-down
aggregates in a bounded worker, then BM25 or dense indexing of the kept
entries), our process's peak RSS and the workers', and optionally the SQL
solver with the embedded model on five aggregate questions, each checked
against a reference answer computed by a query of our own.
"""

from __future__ import annotations

import os
import resource
import time
from typing import Any

#: Five aggregate questions over the generated ``sales`` table, with the reference SQL.
QUESTIONS: list[tuple[str, str]] = [
    (
        "How many orders were placed in the north region?",
        "SELECT count(*) FROM t WHERE region = 'north'",
    ),
    (
        "What is the total quantity sold of product 42?",
        "SELECT sum(quantity) FROM t WHERE product = 'product 42'",
    ),
    (
        "What is the average price of cancelled orders?",
        "SELECT avg(price) FROM t WHERE status = 'cancelled'",
    ),
    (
        "Which region has the most orders?",
        "SELECT region FROM t GROUP BY region ORDER BY count(*) DESC LIMIT 1",
    ),
    ("What is the largest quantity in one order?", "SELECT max(quantity) FROM t"),
]

REGIONS = ("north", "north", "north", "south", "south", "east", "west", "centre")
STATUSES = ("shipped", "shipped", "shipped", "shipped", "pending", "cancelled", "returned")


def peak_rss_mb() -> float:
    """This process's peak resident memory (MB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker_peaks_mb(pids: list[int]) -> list[float]:
    """Peak resident memory (VmHWM, MB) of the live bounded workers."""
    peaks = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as fh:
                for line in fh:
                    if line.startswith("VmHWM:"):
                        peaks.append(int(line.split()[1]) / 1024)
        except OSError:
            continue
    return peaks


def build_index(table: Any, retriever: str, budget: int) -> dict[str, Any]:
    """Build the table's schema/cell index; time, sizes and memory."""
    from tablerag_agents.bounded.pool import default_pool
    from tablerag_agents.table_index import TableIndex

    started = time.perf_counter()
    index = TableIndex.build(table, retriever=retriever, budget=budget)  # type: ignore[arg-type]
    seconds = time.perf_counter() - started
    stats = index.stats
    return {
        "seconds": round(seconds, 2),
        "extract_s": round(stats.extract_s, 2),
        "schema_index_s": round(stats.schema_index_s, 2),
        "cell_index_s": round(stats.cell_index_s, 2),
        "n_schema": stats.n_schema,
        "n_cells": stats.n_cells,
        "n_distinct": stats.n_distinct,
        "skipped_columns": stats.skipped_columns,
        "schema": [e.to_dict() for e in index.schema],
        "host_peak_rss_mb": round(peak_rss_mb(), 1),
        "worker_peak_rss_mb": [round(m, 1) for m in worker_peaks_mb(default_pool().worker_pids())],
    }


def run_questions(table: Any, timeout_s: float) -> list[dict[str, Any]]:
    """The SQL solver with the embedded model on :data:`QUESTIONS` (reference by our SQL)."""
    from tablerag_agents.models import get_chat_model
    from tablerag_agents.solve.base import SolverContext
    from tablerag_agents.solve.sql import SQLSolver
    from tablerag_agents.solve.sql_engine import SourceSQL

    solver = SQLSolver(get_chat_model(), timeout_s=timeout_s)
    reference = SourceSQL(table.source, ["t", table.id], timeout_s=max(timeout_s, 600.0))
    out = []
    for question, sql in QUESTIONS:
        expected = reference.run(sql)
        started = time.perf_counter()
        result = solver.solve(
            SolverContext(
                question=question, tables={table.id: table.df}, sources={table.id: table.source}
            )
        )
        out.append(
            {
                "question": question,
                "answer": result.answer,
                "reference": expected.rows[0][0] if expected.ok and expected.rows else None,
                "sql": [step.code for step in result.trace if step.code],
                "error": result.error,
                "seconds": round(time.perf_counter() - started, 2),
            }
        )
        print(
            f"  {out[-1]['seconds']:6.1f}s  {question} -> {result.answer!r} "
            f"(reference {out[-1]['reference']!r})"
        )
    return out


def machine() -> dict[str, Any]:
    """CPU count and load, recorded beside the figures (the machine is shared)."""
    return {"cpus": os.cpu_count(), "loadavg": [round(x, 2) for x in os.getloadavg()]}
