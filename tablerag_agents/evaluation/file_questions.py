"""Questions over real table files: ``questions.jsonl`` beside the files it names.

One object per line::

    {"id": "q1", "question": "...", "answer": "x" | ["a", "b"],
     "tables": ["sales.xlsx", "staff.xlsx#2", "orders.csv"]}

``tables`` are file names relative to the questions file's folder (and must
stay inside it); ``name#N`` is the N-th table of a spreadsheet holding several
(:func:`~tablerag_agents.tables.loaders.load_table` with ``block=N``). The first
table is the main one; a question naming two tables is asked over both (a join).
Tables load with the library's own loaders, as a user's files would.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

from tablerag_agents.evaluation.types import EvalExample
from tablerag_agents.tables.loaders import load_table
from tablerag_agents.tables.model import Table


def table_ref(folder: Path, ref: str) -> tuple[Path, int | None, str]:
    """The file, block and table id named by ``ref`` (``"staff.xlsx#2"``).

    Raises:
        ValueError: If the name leaves the folder or the block is not a number.
    """
    name, _, block = ref.partition("#")
    path = (folder / name).resolve()
    if not path.is_relative_to(folder.resolve()):
        raise ValueError(f"table {ref!r} is outside the questions folder {folder}")
    if block and not block.isdigit():
        raise ValueError(f"table {ref!r}: the part after '#' must be a table number")
    number = int(block) if block else None
    return path, number, Path(name).stem + (f"#{number}" if number else "")


def _load(folder: Path, refs: list[str]) -> list[Table]:
    tables = []
    for ref in refs:
        path, block, table_id = table_ref(folder, ref)
        tables.append(load_table(path, id=table_id, block=block, quiet=True))
    return tables


def _answers(value: Any, where: str) -> list[str]:
    items = value if isinstance(value, list) else [value]
    if not items or any(item is None or isinstance(item, dict | list) for item in items):
        raise ValueError(f"{where}: 'answer' must be a string, a number or a list of them")
    return [str(item) for item in items]


def load_file_questions(path: str | Path) -> list[EvalExample]:
    """Read ``questions.jsonl`` (see the module docstring); tables load lazily.

    Raises:
        FileNotFoundError: If the file is missing.
        ValueError: For a malformed line, a duplicate id or a table outside the folder.
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"questions file {str(p)!r} does not exist")
    out: list[EvalExample] = []
    seen: set[str] = set()
    for lineno, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{p}:{lineno}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not valid JSON ({exc})") from exc
        if not isinstance(rec, dict) or not {"question", "answer", "tables"} <= set(rec):
            raise ValueError(f"{where}: expected an object with question, answer and tables")
        refs = rec["tables"]
        if not (isinstance(refs, list) and refs and all(isinstance(r, str) for r in refs)):
            raise ValueError(f"{where}: 'tables' must be a non-empty list of file names")
        for ref in refs:
            table_ref(p.parent, ref)
        ex_id = str(rec.get("id") or lineno)
        if ex_id in seen:
            raise ValueError(f"{where}: duplicate id {ex_id!r}")
        seen.add(ex_id)
        out.append(
            EvalExample(
                id=ex_id,
                dataset="files",
                task="qa",
                question=str(rec["question"]),
                answers=_answers(rec["answer"], where),
                table_id=table_ref(p.parent, refs[0])[2],
                load_tables=partial(_load, p.parent, list(refs)),
                meta={"tables": list(refs)},
            )
        )
    return out
