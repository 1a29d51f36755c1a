"""Benchmark loaders: native dataset files to :class:`EvalExample` lists.

Every loader takes paths, so other splits in the same format load unchanged,
and reads tables lazily (``example.load_tables()``). Tables come back with
every cell as a string (the dataset's text; methods convert types themselves),
like :func:`~tablerag_agents.evaluation.datasets.read_wtq_table`.

============ ================================== ======== ===========================
name         files                              task     gold
============ ================================== ======== ===========================
``wtq``      ``training.tsv`` + ``csv/``        qa       ``targetValue`` items
``tabfact``  ``val_examples.json`` + ``all_csv``  fact   ``"1"`` / ``"0"``
``ottqa``    ``tables.json`` + ``dev_questions``  qa     ``answer-text``; gold table
``fetaqa``   ``fetaQA-v1_dev.jsonl``            freeform the answer sentence
``jsonl``    seed 002's TableRAG JSONL          qa       ``label`` (string or list)
``files``    ``questions.jsonl`` + table files  qa       ``answer`` (string or list)
============ ================================== ======== ===========================

:func:`load_dataset` takes a dataset folder laid out as ``../shared/data`` (or
the data file itself). OTT-QA examples carry the gold table id: a retrieval run
must search :func:`load_ottqa_tables` and never use ``table_id``/``caption``
as input.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from tablerag_agents.errors import TableLoadError
from tablerag_agents.evaluation.datasets import load_wtq, read_tabfact_table, read_wtq_table
from tablerag_agents.evaluation.file_questions import load_file_questions
from tablerag_agents.evaluation.metrics import normalize_fact_label
from tablerag_agents.evaluation.types import EvalExample, Task
from tablerag_agents.tables import Table, load_ottqa_corpus, ottqa_table
from tablerag_agents.tables.cleaning import normalize_column_names

logger = logging.getLogger(__name__)

TABFACT_TABLES_FOLDER = "all_csv"
"""TabFact's folder of tables, beside its statements JSON; a record's table id is a name in it."""

__all__ = [
    "DATASETS",
    "DatasetSpec",
    "TABFACT_TABLES_FOLDER",
    "load_dataset",
    "load_fetaqa",
    "load_jsonl",
    "load_ottqa",
    "load_ottqa_tables",
    "load_tabfact",
    "load_wtq_examples",
    "rows_to_table",
]


def _need_file(path: str | Path, what: str) -> Path:
    p = Path(path)
    if not p.is_file():
        state = "is a folder, not a file" if p.is_dir() else "does not exist"
        raise FileNotFoundError(f"{what} {str(p)!r} {state}")
    return p


def _need_dir(path: str | Path, what: str) -> Path:
    p = Path(path)
    if not p.is_dir():
        state = "is a file, not a folder" if p.exists() else "does not exist"
        raise FileNotFoundError(f"{what} {str(p)!r} {state}")
    return p


def _check_tables_exist(paths: Sequence[Path], what: str) -> None:
    missing = [str(p) for p in dict.fromkeys(paths) if not p.is_file()]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise FileNotFoundError(f"{what}: table file {missing[0]!r} does not exist{more}")


def rows_to_table(
    rows: Sequence[Sequence[Any]],
    *,
    table_id: str,
    caption: str = "",
    metadata: dict[str, Any] | None = None,
) -> Table:
    """Build a string :class:`Table` from a list of rows whose first row is the header.

    Header names are made unique and non-empty; data rows shorter than the header
    are padded with ``""`` and longer ones cut; ``None`` cells become ``""``.

    Raises:
        ValueError: If there is no header row or no data row.
    """
    if len(rows) < 2:
        raise ValueError(f"table {table_id!r} needs a header row and at least one data row")
    names, _ = normalize_column_names([str(h) if h is not None else "" for h in rows[0]])
    width = len(names)
    cells = [
        ([("" if c is None else str(c)) for c in row] + [""] * width)[:width] for row in rows[1:]
    ]
    df = pd.DataFrame(cells, columns=names, dtype=object)
    return Table(id=table_id, df=df, caption=caption, metadata=dict(metadata or {}))


# --------------------------------------------------------------------------- WTQ


def _wtq_table(path: Path, table_id: str) -> list[Table]:
    df = read_wtq_table(path)
    return [Table(id=table_id, df=df, caption="", metadata={"source": str(path)})]


def load_wtq_examples(
    questions_tsv: str | Path, tables_root: str | Path | None = None
) -> list[EvalExample]:
    """Read WikiTableQuestions questions (``id, utterance, context, targetValue``).

    Args:
        questions_tsv: The TSV (``training.tsv``, or any upstream split file).
        tables_root: Folder the ``context`` paths (``csv/204-csv/590.csv``) are
            relative to. Default: the TSV's folder, or its parent when the tables
            are found there (the upstream ``data/`` layout).

    Returns:
        Task ``qa`` examples; ``table_id`` is the ``context`` path.

    Raises:
        FileNotFoundError: If the TSV or a referenced table file is missing.
        ValueError: If the TSV lacks a WTQ column.
    """
    path = _need_file(questions_tsv, "WTQ questions file")
    root = Path(tables_root) if tables_root is not None else path.parent
    raw = load_wtq(path, tables_root=root)
    if tables_root is None and raw and not raw[0].table_path.exists():
        context = os.path.relpath(raw[0].table_path, path.parent.resolve())
        if (path.parent.parent / context).is_file():  # upstream layout: data/x.tsv, csv/
            root = path.parent.parent
            raw = load_wtq(path, tables_root=root)
    root = root.resolve()
    _check_tables_exist([q.table_path for q in raw], f"{path}")
    out = []
    ids: dict[Path, str] = {}
    for q in raw:
        if q.table_path not in ids:
            ids[q.table_path] = Path(os.path.relpath(q.table_path, root)).as_posix()
        table_id = ids[q.table_path]
        out.append(
            EvalExample(
                id=q.id,
                dataset="wtq",
                task="qa",
                question=q.question,
                answers=list(q.answers),
                table_id=table_id,
                load_tables=partial(_wtq_table, q.table_path, table_id),
            )
        )
    return out


# ----------------------------------------------------------------------- TabFact


def _tabfact_table(path: Path, caption: str) -> list[Table]:
    df = read_tabfact_table(path)
    return [Table(id=path.name, df=df, caption=caption, metadata={"source": str(path)})]


def load_tabfact(statements_json: str | Path, tables_dir: str | Path) -> list[EvalExample]:
    """Read TabFact statements (``{table_file: [statements, labels, caption]}``).

    Args:
        statements_json: E.g. ``tabfact/val_examples.json``.
        tables_dir: The ``all_csv`` folder of ``#``-separated tables.

    Returns:
        Task ``fact`` examples, id ``f"{table_file}#{i}"``, gold ``["1"]``
        (entailed) or ``["0"]`` (refuted), caption from the JSON.

    Raises:
        FileNotFoundError: If the JSON, the folder or a table file is missing.
        ValueError: If the JSON is not in the TabFact shape.
    """
    path = _need_file(statements_json, "TabFact statements file")
    folder = _need_dir(tables_dir, "TabFact tables folder")
    with path.open(encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, dict):
        raise ValueError(
            f"{path}: expected a JSON object {{table_file: [statements, labels, caption]}}"
        )
    out: list[EvalExample] = []
    table_paths = []
    for table_file, entry in data.items():
        if not (isinstance(entry, list) and len(entry) >= 2):
            raise ValueError(f"{path}: entry {table_file!r} is not [statements, labels, caption]")
        statements, labels = entry[0], entry[1]
        caption = str(entry[2]) if len(entry) > 2 and entry[2] is not None else ""
        if not isinstance(statements, list) or not isinstance(labels, list):
            raise ValueError(f"{path}: entry {table_file!r}: statements and labels must be lists")
        if len(statements) != len(labels):
            raise ValueError(
                f"{path}: entry {table_file!r} has {len(statements)} statements "
                f"and {len(labels)} labels"
            )
        table_path = folder / table_file
        table_paths.append(table_path)
        loader = partial(_tabfact_table, table_path, caption)
        for i, (statement, label) in enumerate(zip(statements, labels, strict=True)):
            gold = normalize_fact_label(label)
            if gold is None:
                raise ValueError(f"{path}: entry {table_file!r} statement {i}: label {label!r}")
            out.append(
                EvalExample(
                    id=f"{table_file}#{i}",
                    dataset="tabfact",
                    task="fact",
                    question=str(statement),
                    answers=[gold],
                    table_id=table_file,
                    load_tables=loader,
                    caption=caption,
                )
            )
    _check_tables_exist(table_paths, f"{path}")
    return out


# ------------------------------------------------------------------------ OTT-QA

_JSON_CACHE: dict[tuple[str, int, int], dict[str, Any]] = {}
_JSON_LOCK = threading.Lock()


def _ottqa_raw(path: Path) -> dict[str, Any]:
    """The parsed ``tables.json``, read once per file version (it is ~37 MB)."""
    st = path.stat()
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    with _JSON_LOCK:
        if key not in _JSON_CACHE:
            with path.open(encoding="utf-8") as fh:
                raw = json.load(fh)
            if isinstance(raw, list):
                raw = {str(t.get("uid")): t for t in raw if isinstance(t, dict)}
            if not isinstance(raw, dict):
                raise ValueError(f"{path}: expected a JSON object {{table_id: table}}")
            _JSON_CACHE.clear()  # keep one corpus in memory
            _JSON_CACHE[key] = raw
        return _JSON_CACHE[key]


def _ottqa_gold_table(path: Path, table_id: str) -> list[Table]:
    raw = _ottqa_raw(path)
    if table_id not in raw:
        raise TableLoadError(path, f"no table {table_id!r} in the OTT-QA tables file")
    table = ottqa_table(raw[table_id], table_id=table_id)
    table.metadata["source"] = str(path)
    return [table]


def load_ottqa(tables_json: str | Path, questions_json: str | Path) -> list[EvalExample]:
    """Read OTT-QA questions (``[{question_id, question, table_id, answer-text}]``).

    The tables file is only parsed when a gold table is first loaded (once,
    then cached). ``load_tables()`` returns the gold table; for retrieval runs
    search the whole corpus (:func:`load_ottqa_tables`) and score HITS@k against
    ``table_id``.

    Raises:
        FileNotFoundError: If either file is missing.
        ValueError: If the questions file is not a list of OTT-QA questions.
    """
    tables = _need_file(tables_json, "OTT-QA tables file")
    path = _need_file(questions_json, "OTT-QA questions file")
    with path.open(encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of questions")
    out = []
    for i, q in enumerate(data):
        missing = (
            [k for k in ("question_id", "question", "table_id", "answer-text") if k not in q]
            if isinstance(q, dict)
            else ["(not an object)"]
        )
        if missing:
            raise ValueError(f"{path}: question {i} lacks {missing}")
        answer = q["answer-text"]
        out.append(
            EvalExample(
                id=str(q["question_id"]),
                dataset="ottqa",
                task="qa",
                question=str(q["question"]),
                answers=[str(a) for a in answer] if isinstance(answer, list) else [str(answer)],
                table_id=str(q["table_id"]),
                load_tables=partial(_ottqa_gold_table, tables, str(q["table_id"])),
            )
        )
    return out


def load_ottqa_tables(tables_json: str | Path, *, limit: int | None = None) -> list[Table]:
    """The whole OTT-QA table corpus (for retrieval runs), ids = table ids.

    Uses :func:`~tablerag_agents.tables.load_ottqa_corpus` (~4 s for 8.9k tables).
    """
    return load_ottqa_corpus(_need_file(tables_json, "OTT-QA tables file"), limit=limit)


# ----------------------------------------------------------------- JSON lines


def _jsonl_lines(path: Path) -> Iterator[tuple[int, int, Any]]:
    """Yield ``(line_number, byte_offset, parsed_object)`` for non-blank lines."""
    offset = 0
    with path.open("rb") as fh:
        for lineno, line in enumerate(fh, start=1):
            start, offset = offset, offset + len(line)
            if not line.strip():
                continue
            try:
                yield lineno, start, json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise ValueError(f"{path}:{lineno}: not valid JSON ({exc})") from exc


def _read_line(path: Path, offset: int) -> dict[str, Any]:
    with path.open("rb") as fh:
        fh.seek(offset)
        return json.loads(fh.readline())


def _check_rows(rows: Any, where: str) -> None:
    if not (isinstance(rows, list) and all(isinstance(r, list) for r in rows)):
        raise ValueError(f"{where}: the table must be a list of rows (lists), header first")
    if len(rows) < 2:
        raise ValueError(f"{where}: the table needs a header row and at least one data row")
    if not rows[0]:
        raise ValueError(f"{where}: the table's header row is empty")


def _fetaqa_table(path: Path, offset: int, table_id: str) -> list[Table]:
    rec = _read_line(path, offset)
    meta = {
        "source": str(path),
        "section_title": str(rec.get("table_section_title") or ""),
        "url": str(rec.get("page_wikipedia_url") or ""),
    }
    caption = str(rec.get("table_page_title") or "")
    return [rows_to_table(rec["table_array"], table_id=table_id, caption=caption, metadata=meta)]


def load_fetaqa(jsonl: str | Path) -> list[EvalExample]:
    """Read FeTaQA (JSON lines with an inline ``table_array``, header first).

    Returns:
        Task ``freeform`` examples: id ``feta_id``, gold ``[answer sentence]``,
        caption the page title; ``meta`` has ``section_title``, ``url``,
        ``highlighted_cell_ids`` (``[row, col]`` in ``table_array``, row 0 =
        header) and ``table_source_json``.

    Raises:
        FileNotFoundError: If the file is missing.
        ValueError: For a malformed line (the message names it).
    """
    path = _need_file(jsonl, "FeTaQA file")
    out = []
    for lineno, offset, rec in _jsonl_lines(path):
        where = f"{path}:{lineno}"
        if not isinstance(rec, dict):
            raise ValueError(f"{where}: expected a JSON object")
        missing = [k for k in ("feta_id", "question", "answer", "table_array") if k not in rec]
        if missing:
            raise ValueError(f"{where}: missing field(s) {missing}")
        _check_rows(rec["table_array"], where)
        table_id = str(rec.get("table_source_json") or f"fetaqa-{rec['feta_id']}")
        out.append(
            EvalExample(
                id=str(rec["feta_id"]),
                dataset="fetaqa",
                task="freeform",
                question=str(rec["question"]),
                answers=[str(rec["answer"])],
                table_id=table_id,
                load_tables=partial(_fetaqa_table, path, offset, table_id),
                caption=str(rec.get("table_page_title") or ""),
                meta={
                    "section_title": str(rec.get("table_section_title") or ""),
                    "url": str(rec.get("page_wikipedia_url") or ""),
                    "highlighted_cell_ids": rec.get("highlighted_cell_ids") or [],
                    "table_source_json": str(rec.get("table_source_json") or ""),
                },
            )
        )
    return out


def _labels(value: Any, task: Task, where: str) -> list[str]:
    items = value if isinstance(value, list) else [value]
    if task == "fact":
        if len(items) != 1 or (gold := normalize_fact_label(items[0])) is None:
            raise ValueError(f"{where}: 'label' {value!r} is not a true/false (1/0) label")
        return [gold]
    out = []
    for item in items:
        if item is None or isinstance(item, dict | list):
            raise ValueError(f"{where}: 'label' items must be strings or numbers, got {item!r}")
        out.append(str(item).lower() if isinstance(item, bool) else str(item))
    if not out:
        raise ValueError(f"{where}: 'label' is an empty list")
    return out


def _jsonl_table(path: Path, offset: int, table_id: str, caption: str) -> list[Table]:
    rec = _read_line(path, offset)
    meta = {"source": str(path)}
    return [rows_to_table(rec["table_text"], table_id=table_id, caption=caption, metadata=meta)]


def load_jsonl(path: str | Path, *, task: Task = "qa", dataset: str = "jsonl") -> list[EvalExample]:
    """Read seed 002's TableRAG JSON lines (bring your own benchmark).

    One object per line::

        {"table_text": [["col1", "col2"], ["v1", "v2"]], "question": "...",
         "label": "answer" | ["a", "b"], "table_caption": "...",
         "table_id": "...", "id": "..."}

    ``table_text`` is a list of rows, the header first (cells: strings, numbers
    or null). ``label`` is one answer or a list of answer items; with
    ``task="fact"`` it must be a true/false label (1/0, true/false,
    entailed/refuted...). ``id`` defaults to the line number, ``table_id`` to
    the id, ``table_caption`` to "". Blank lines are skipped. Tables are re-read
    from the file when loaded, so a big file is not held in memory.

    Raises:
        FileNotFoundError: If the file is missing.
        ValueError: For a malformed line or a duplicate id (the message names the line).
    """
    if task not in ("qa", "fact", "freeform"):
        raise ValueError(f"task must be 'qa', 'fact' or 'freeform', not {task!r}")
    p = _need_file(path, "JSONL file")
    out = []
    seen: dict[str, int] = {}
    for lineno, offset, rec in _jsonl_lines(p):
        where = f"{p}:{lineno}"
        if not isinstance(rec, dict):
            raise ValueError(f"{where}: expected a JSON object")
        missing = [k for k in ("table_text", "question", "label") if k not in rec]
        if missing:
            raise ValueError(f"{where}: missing field(s) {missing}")
        if not isinstance(rec["question"], str) or not rec["question"].strip():
            raise ValueError(f"{where}: 'question' must be a non-empty string")
        _check_rows(rec["table_text"], where)
        ex_id = str(rec["id"]) if rec.get("id") not in (None, "") else str(lineno)
        if ex_id in seen:
            raise ValueError(f"{where}: duplicate id {ex_id!r} (first on line {seen[ex_id]})")
        seen[ex_id] = lineno
        table_id = str(rec["table_id"]) if rec.get("table_id") not in (None, "") else ex_id
        caption = str(rec.get("table_caption") or "")
        out.append(
            EvalExample(
                id=ex_id,
                dataset=dataset,
                task=task,
                question=rec["question"],
                answers=_labels(rec["label"], task, where),
                table_id=table_id,
                load_tables=partial(_jsonl_table, p, offset, table_id, caption),
                caption=caption,
            )
        )
    return out


# ---------------------------------------------------------------------- registry


@dataclass(frozen=True)
class DatasetSpec:
    """How :func:`load_dataset` finds one dataset's files.

    Attributes:
        name: Registry key.
        task: The task of its examples.
        files: Files expected inside the dataset folder (the first is the questions file).
        load: Reads the dataset from a folder or a questions file.
        description: One line for help texts.
    """

    name: str
    task: Task
    files: tuple[str, ...]
    load: Callable[[Path], list[EvalExample]]
    description: str


def _in_folder(data_path: Path, name: str) -> Path:
    """``data_path/name`` for a folder, else ``data_path`` itself (a file)."""
    if data_path.is_dir():
        return _need_file(data_path / name, f"{name} in the dataset folder:")
    return _need_file(data_path, "dataset file")


def _load_wtq_path(p: Path) -> list[EvalExample]:
    return load_wtq_examples(_in_folder(p, "training.tsv"))


def _load_tabfact_path(p: Path) -> list[EvalExample]:
    statements = _in_folder(p, "val_examples.json")
    return load_tabfact(
        statements, _need_dir(statements.parent / TABFACT_TABLES_FOLDER, "TabFact tables folder")
    )


def _load_ottqa_path(p: Path) -> list[EvalExample]:
    questions = _in_folder(p, "dev_questions.json")
    return load_ottqa(_need_file(questions.parent / "tables.json", "OTT-QA tables file"), questions)


def _load_fetaqa_path(p: Path) -> list[EvalExample]:
    return load_fetaqa(_in_folder(p, "fetaQA-v1_dev.jsonl"))


def _load_jsonl_path(p: Path) -> list[EvalExample]:
    return load_jsonl(_need_file(p, "JSONL file"))


def _load_files_path(p: Path) -> list[EvalExample]:
    return load_file_questions(_in_folder(p, "questions.jsonl"))


DATASETS: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in (
        DatasetSpec(
            "wtq",
            "qa",
            ("training.tsv", "csv/"),
            _load_wtq_path,
            "WikiTableQuestions: folder with training.tsv and csv/, or a questions TSV",
        ),
        DatasetSpec(
            "tabfact",
            "fact",
            ("val_examples.json", "all_csv/"),
            _load_tabfact_path,
            "TabFact: folder with val_examples.json and all_csv/, or a statements JSON "
            "with all_csv/ beside it",
        ),
        DatasetSpec(
            "ottqa",
            "qa",
            ("dev_questions.json", "tables.json"),
            _load_ottqa_path,
            "OTT-QA: folder with dev_questions.json and tables.json, or a questions JSON "
            "with tables.json beside it",
        ),
        DatasetSpec(
            "fetaqa",
            "freeform",
            ("fetaQA-v1_dev.jsonl",),
            _load_fetaqa_path,
            "FeTaQA: folder with fetaQA-v1_dev.jsonl, or a FeTaQA .jsonl file",
        ),
        DatasetSpec(
            "jsonl",
            "qa",
            (),
            _load_jsonl_path,
            "seed 002's TableRAG JSONL file (table_text, question, label, ...)",
        ),
        DatasetSpec(
            "files",
            "qa",
            ("questions.jsonl",),
            _load_files_path,
            "questions over real table files: folder with questions.jsonl (question, "
            "answer, tables: file names beside it)",
        ),
    )
}


def load_dataset(name: str, data_path: str | Path) -> list[EvalExample]:
    """Load a registered dataset from its folder (layout of ``../shared/data``) or file.

    Args:
        name: A key of :data:`DATASETS` (``wtq, tabfact, ottqa, fetaqa, jsonl, files``).
        data_path: The dataset folder (e.g. ``../shared/data/wtq``) or its
            questions file (other splits: ``pristine-unseen-tables.tsv``...).

    Raises:
        ValueError: For an unknown dataset name or malformed data.
        FileNotFoundError: If a needed file is missing (the message names it).
    """
    spec = DATASETS.get(name)
    if spec is None:
        raise ValueError(f"unknown dataset {name!r}; known: {sorted(DATASETS)}")
    path = Path(data_path)
    if not path.exists():
        raise FileNotFoundError(f"{name} data path {str(path)!r} does not exist")
    return spec.load(path)
