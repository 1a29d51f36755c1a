"""Pick the columns a question needs before its query is written (one short call).

A small model writing SQL over a wide table reads every column and its rows at
once and picks the wrong one, or copies a column of the prompt's example.
Splitting the step in two gives each call one task: first the model names the
columns the question needs (from their names and a few values), then it writes
the query over a prompt that shows only those columns. The database keeps every
column, so a query naming another one still runs. A reply naming no known
column leaves the table whole.
"""

from __future__ import annotations

import re

import pandas as pd

from tablerag_agents.prompts import load_prompt
from tablerag_agents.tables.typed_table import TypedTable

PICK_MIN_COLUMNS = 5
"""Tables with fewer columns are shown whole (nothing worth narrowing)."""
_EXAMPLES = 3
"""Distinct values shown per column in the picking prompt."""
_MAX_CHARS = 30
"""Longer example values are cut."""


def pick_candidates(frame: pd.DataFrame, view: TypedTable | None = None) -> list[str]:
    """The columns the model picks from: ``frame``'s own columns, without the typed
    view's companions, row numbers and summary flags (they follow their base)."""
    added: set[str | None] = set()
    if view is not None:
        added = {*view.companions, view.row_column, view.summary_column}
    return [str(c) for c in frame.columns if str(c) not in added]


def _examples(cells: pd.Series) -> str:
    values: list[str] = []
    for cell in cells.dropna().astype(str):
        text = " ".join(cell.split())
        if text and text not in values:
            values.append(text if len(text) <= _MAX_CHARS else text[: _MAX_CHARS - 3] + "...")
        if len(values) == _EXAMPLES:
            break
    return ", ".join(values)


def pick_prompt(frame: pd.DataFrame, candidates: list[str], question: str) -> str:
    """The picking prompt: each candidate column (double-quoted) with a few values."""
    lines = [f'"{c}": {_examples(frame[c])}' for c in candidates]
    return load_prompt("sql_pick_columns").format(columns="\n".join(lines), question=question)


def parse_picked(reply: str, candidates: list[str]) -> list[str]:
    """The candidates ``reply`` names, in table order (longest names matched first, so
    "Year of birth" is not also read as "Year"); case and spacing are ignored."""
    text = " ".join(reply.lower().split())
    found: set[str] = set()
    for name in sorted(candidates, key=len, reverse=True):
        key = " ".join(name.lower().split())
        if not key:
            continue
        pattern = rf"(?<![\w]){re.escape(key)}(?![\w])"
        if re.search(pattern, text):
            found.add(name)
            text = re.sub(pattern, " ", text)
    return [c for c in candidates if c in found]


def narrow(frame: pd.DataFrame, picked: list[str], view: TypedTable | None = None) -> pd.DataFrame:
    """``frame`` with only the ``picked`` columns, their companions, and the view's row
    numbers and summary flags; ``frame`` itself when nothing or everything is picked."""
    keep = set(picked)
    if not keep or keep >= set(pick_candidates(frame, view)):
        return frame
    if view is not None:
        keep |= {comp for comp, base in view.companions.items() if base in keep}
        keep |= {c for c in (view.row_column, view.summary_column) if c}
    return frame[[c for c in frame.columns if str(c) in keep]]
