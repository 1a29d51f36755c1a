"""Replay the failed SQL queries of dev eval runs through today's automatic repairs.

Every model-written query that failed in a records file of `tablerag eval` (dev
split only) is run again on its table, through the SQL solver's engine and
repairs (:meth:`SQLSolver._run`), with the run's own solver settings. No model is
called: the script counts how many failed queries the repairs now make run, by
DuckDB error class, and prints each one that changed with its new result.

    python bench/sql_repair_replay.py bench/results/eval/dev/*-at-3ee4247.jsonl \\
        --wtq ../shared/data/wtq --tabfact ../shared/data/tabfact --out replay.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from tablerag_agents.evaluation.datasets import read_tabfact_table, read_wtq_table
from tablerag_agents.evaluation.loaders import TABFACT_TABLES_FOLDER
from tablerag_agents.evaluation.records import read_records
from tablerag_agents.solve.base import SolverContext
from tablerag_agents.solve.sql import REPEATED, SQLSolver

#: Solver switches a run's settings may turn on (the rest do not change the tables).
TABLE_SWITCHES = ("typed_columns", "row_numbers")


def error_class(error: str) -> str:
    """A short name for a DuckDB error message."""
    first = error.splitlines()[0] if error else "(none)"
    for pattern, name in (
        (r"must appear in the GROUP BY", "column not grouped"),
        (r"not found because the FROM clause is missing", "FROM missing"),
        (r"Referenced column .* not found", "column not found"),
        (r"Cannot mix values of type", "CASE mixes types"),
        (r"Could not choose a best candidate", "operator types"),
        (r"syntax error", "syntax error"),
        (r"Conversion Error", "conversion"),
    ):
        if re.search(pattern, first, re.I):
            return name
    return re.sub(r"\"[^\"]*\"|'[^']*'", "…", first)[:70]


def failed_queries(records: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(table id, question, query) of every distinct failed SQL step."""
    seen: set[tuple[str, str]] = set()
    out = []
    for record in records:
        tables = record.get("detail", {}).get("table_ids") or []
        for step in record.get("detail", {}).get("steps") or []:
            if step.get("action") != "sql" or step.get("ok") is not False or not tables:
                continue
            code = str(step.get("code") or "")
            if step.get("observation") == REPEATED or (tables[0], code) in seen:
                continue
            seen.add((tables[0], code))
            out.append((tables[0], record["question"], code))
    return out


def read_table(dataset: str, data: Path, table_id: str) -> pd.DataFrame:
    """The table as the harness loads it."""
    if dataset == "tabfact":
        return read_tabfact_table(data / TABFACT_TABLES_FOLDER / table_id)
    return read_wtq_table(data / table_id)


def replay(path: Path, data: dict[str, Path]) -> list[dict[str, Any]]:
    """Replay every failed query of one records file."""
    header, records = read_records(path)
    spec = header.get("spec", {})
    if spec.get("split") != "dev":
        raise SystemExit(f"{path}: split {spec.get('split')!r}; only dev runs are replayed")
    dataset = str(spec.get("dataset"))
    settings = spec.get("settings") or {}
    switches = {k: str(settings.get(k, "")).lower() == "true" for k in TABLE_SWITCHES}
    solver = SQLSolver(FakeListChatModel(responses=["unused"]), **switches)
    rows = []
    for table_id, question, code in failed_queries(records):
        ctx = SolverContext.from_df(question, read_table(dataset, data[dataset], table_id))
        engine, tables, _ = solver._engine(ctx)
        before = engine.run(code)
        if before.ok:  # passes now without any repair (e.g. a timing-dependent failure)
            continue
        after, fixed = solver._run(engine, code, tables)
        rows.append(
            {
                "records": path.name,
                "table": table_id,
                "question": question,
                "query": code,
                "error": error_class(before.error or ""),
                "repaired": after.ok,
                "fixed_query": fixed if fixed != code else None,
                "result": after.observation(max_rows=5, max_chars=300) if after.ok else None,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, replay, print the summary and the changed queries."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path, nargs="+", help="records files (dev split)")
    parser.add_argument("--wtq", type=Path, default=Path("../shared/data/wtq"))
    parser.add_argument("--tabfact", type=Path, default=Path("../shared/data/tabfact"))
    parser.add_argument("--out", type=Path, help="write the summary and every query as JSON")
    args = parser.parse_args(argv)
    data = {"wtq": args.wtq, "tabfact": args.tabfact}
    rows = [row for path in args.records for row in replay(path, data)]
    by_class: Counter[str] = Counter(r["error"] for r in rows)
    fixed: Counter[str] = Counter(r["error"] for r in rows if r["repaired"])
    for row in rows:
        if row["repaired"]:
            print(f"[{row['error']}] {row['question']}\n  {row['query']}")
            print(f"  -> {row['fixed_query']}")
            print("  = " + (row["result"] or "").replace("\n", " | "))
    print(f"\n{sum(fixed.values())} of {len(rows)} failed queries run after the repairs")
    for name, count in by_class.most_common():
        print(f"  {fixed[name]:3d} / {count:3d}  {name}")
    if args.out:
        summary = {
            "failed": len(rows),
            "repaired": sum(fixed.values()),
            "by_error": {k: {"failed": v, "repaired": fixed[k]} for k, v in by_class.items()},
            "queries": rows,
        }
        args.out.write_text(json.dumps(summary, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
