"""WikiTableQuestions (WTQ) loader and native table readers.

The :class:`~tablerag_agents.evaluation.types.EvalExample` loaders for every
benchmark are in :mod:`tablerag_agents.evaluation.loaders`; honest dev/test
samples are drawn by :mod:`tablerag_agents.evaluation.splits`.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from tablerag_agents.errors import TableLoadError


@dataclass(frozen=True)
class QAExample:
    """One table question with its gold answers.

    Attributes:
        id: Question id from the dataset (e.g. ``nt-0``).
        question: The natural-language question.
        table_path: Absolute path of the table file.
        answers: Gold answer items (several when the answer is a list).
    """

    id: str
    question: str
    table_path: Path
    answers: list[str] = field(default_factory=list)


def _unescape_wtq(value: str) -> str:
    """Undo WTQ's escapes in one answer item (``\\n``, ``\\\\``, ``\\p`` for a pipe)."""
    out: list[str] = []
    i = 0
    while i < len(value):
        ch = value[i]
        if ch == "\\" and i + 1 < len(value):
            nxt = value[i + 1]
            out.append({"n": "\n", "p": "|", "\\": "\\"}.get(nxt, "\\" + nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def parse_wtq_answers(target_value: str) -> list[str]:
    """Split a WTQ ``targetValue`` into answer items (``|``-separated, escapes undone)."""
    return [_unescape_wtq(v) for v in target_value.split("|")]


def load_wtq(questions: str | Path, tables_root: str | Path | None = None) -> list[QAExample]:
    """Read a WTQ questions TSV (``id, utterance, context, targetValue``).

    Args:
        questions: The TSV file (e.g. ``wtq/training.tsv``).
        tables_root: Folder the ``context`` paths are relative to (default: the
            TSV's folder).

    Raises:
        FileNotFoundError: If the TSV does not exist.
        ValueError: If the header lacks one of the expected columns.
    """
    path = Path(questions)
    root = Path(tables_root) if tables_root is not None else path.parent
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        missing = {"id", "utterance", "context", "targetValue"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"{path} lacks the WTQ columns {sorted(missing)}")
        resolved: dict[str, Path] = {}  # many questions share a table
        out = []
        for row in reader:
            context = row["context"]
            if context not in resolved:
                resolved[context] = (root / context).resolve()
            out.append(
                QAExample(
                    id=row["id"],
                    question=row["utterance"],
                    table_path=resolved[context],
                    answers=parse_wtq_answers(row["targetValue"]),
                )
            )
        return out


def read_wtq_table(path: str | Path) -> pd.DataFrame:
    """Read a WTQ table CSV as strings (quotes inside fields are backslash-escaped).

    Raises:
        TableLoadError: If the file is missing or does not parse.
    """
    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False, escapechar="\\")
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise TableLoadError(path, str(exc)) from exc


def read_tabfact_table(path: str | Path) -> pd.DataFrame:
    """Read a TabFact table (``#``-separated, header first, no quoting) as strings.

    Raises:
        TableLoadError: If the file is missing or does not parse.
    """
    try:
        return pd.read_csv(path, sep="#", dtype=str, keep_default_na=False, quoting=csv.QUOTE_NONE)
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise TableLoadError(path, str(exc)) from exc
