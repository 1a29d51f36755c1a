"""Print the wrong answers of a dev eval run as Markdown, for classifying errors by hand.

Each wrong (or failed) record is shown with its question, gold and predicted
answers, the solver's steps kept in the record (queries and what they returned)
and the head of its table, so an error class can be given from the page alone.
Records of the test split are refused: errors are analysed on dev only.

    python bench/error_cases.py RECORDS.jsonl --data ../shared/data/wtq > cases.md
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tablerag_agents.evaluation.datasets import read_tabfact_table, read_wtq_table
from tablerag_agents.evaluation.loaders import TABFACT_TABLES_FOLDER
from tablerag_agents.evaluation.records import read_records

HEAD_ROWS = 6


def _table_head(data: Path, table_id: str, dataset: str) -> str:
    if dataset == "tabfact":
        path, reader = data / TABFACT_TABLES_FOLDER / table_id, read_tabfact_table
    else:  # WTQ table ids are paths inside the dataset folder
        path, reader = data / table_id, read_wtq_table
    try:
        frame = reader(path)
    except Exception as exc:  # noqa: BLE001 - shown in the page, not fatal
        return f"(table not readable: {exc})"
    head = frame.head(HEAD_ROWS).to_csv(index=False).strip()
    return f"{len(frame)} rows x {len(frame.columns)} columns\n```\n{head}\n```"


def _steps(record: dict[str, Any]) -> str:
    lines = []
    for step in record.get("detail", {}).get("steps") or []:
        mark = "ok" if step.get("ok") else "FAILED" if step.get("ok") is False else ""
        code = str(step.get("code") or "").strip()
        observation = str(step.get("observation") or "").strip().replace("\n", " | ")
        lines.append(f"- {step.get('action')} {mark}: `{code}`\n  -> {observation[:300]}")
    return "\n".join(lines) or "(no steps recorded)"


def render(records: list[dict[str, Any]], data: Path, dataset: str) -> str:
    """The Markdown page of every wrong record."""
    wrong = [r for r in records if not r.get("correct")]
    parts = [f"{len(wrong)} wrong of {len(records)}\n"]
    for record in wrong:
        tables = record.get("detail", {}).get("table_ids") or []
        parts.append(
            f"## {record['id']}: {record['question']}\n"
            f"- gold: {record.get('gold')}\n- answer: {record.get('answer')}"
            f" (solver {record.get('detail', {}).get('solver')},"
            f" confidence {record.get('detail', {}).get('confidence')})\n"
            f"- error: {record.get('error_message')}\n\n{_steps(record)}\n\n"
            + "\n".join(_table_head(data, t, dataset) for t in tables[:1])
            + "\n"
        )
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and print the page."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path, help="a records file of `tablerag eval` (dev split)")
    parser.add_argument("--data", type=Path, required=True, help="the dataset's folder")
    args = parser.parse_args(argv)
    header, records = read_records(args.records)
    spec = header.get("spec", {})
    if spec.get("split") != "dev":
        print(
            f"{args.records}: split {spec.get('split')!r}; only dev runs are analysed",
            file=sys.stderr,
        )
        return 2
    print(render(records, args.data, str(spec.get("dataset"))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
