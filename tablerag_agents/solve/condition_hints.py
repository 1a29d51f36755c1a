"""Explain why a query's text conditions may have matched nothing.

When a query comes back empty (no rows, or one 0/NULL), the cause is most often
a condition on a text column that cannot hold: ``"Racing series" = 'ESPY
Awards'`` when the award is the whole table's subject and no cell says so, or
``"Competition" = 'CARIFTA Games (U20)'`` copied from the rows shown although
the question never names that competition. :func:`condition_hints` finds such
conditions from the query, the table's cells and the question alone (never an
answer) and words a hint for the next attempt. Literals that resemble a cell
are left to :func:`~tablerag_agents.solve.grounding.literal_hint`; numbers to
:func:`~tablerag_agents.solve.grounding.unasked_number_filters`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import pandas as pd

from tablerag_agents.solve.grounding import ungrounded_literals

_CONDITION = re.compile(
    r"""("(?:[^"]|"")+"|\b[A-Za-z_]\w*)\s*(=|(?:NOT\s+)?I?LIKE)\s*'((?:[^']|'')*)'""", re.I
)
_WORD = re.compile(r"[^\W_]+")
_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
_ORDINAL_WORDS = {
    "first": "1", "second": "2", "third": "3", "fourth": "4", "fifth": "5", "sixth": "6",
    "seventh": "7", "eighth": "8", "ninth": "9", "tenth": "10",
}  # fmt: skip
_SHOWN_VALUES = 6
_SHOWN_CHARS = 40
_PREFIX = 4
"""Words match on their first letters (``award``/``awards``, ``won``/``win`` do not)."""


def _words(text: str) -> set[str]:
    out = set()
    for word in _WORD.findall(text.lower()):
        if match := _ORDINAL.match(word):
            word = match.group(1)
        out.add(_ORDINAL_WORDS.get(word, word))
    return out


def _mentioned(literal: str, question_words: set[str]) -> bool:
    """True if a word of ``literal`` (or its first letters) is in the question."""
    words = _words(literal)
    if not words or all(w.isdigit() for w in words):
        return True  # numbers are another check's business
    stems = {w[:_PREFIX] for w in question_words if len(w) >= _PREFIX}
    for word in words:
        if word in question_words or (len(word) >= _PREFIX and word[:_PREFIX] in stems):
            return True
    return False


def _column_cells(tables: Mapping[str, pd.DataFrame], column: str) -> pd.Series | None:
    for frame in tables.values():
        if column in frame.columns:
            cells = frame[column]
            if isinstance(cells, pd.DataFrame):  # duplicate names: the first
                cells = cells.iloc[:, 0]
            return cells.dropna().astype(str).str.strip()
    return None


def _matches(pattern: str, op: str, cells: pd.Series) -> bool:
    """True if some cell satisfies ``op pattern`` (LIKE patterns compared without case)."""
    if op == "=":
        return bool((cells == pattern).any())
    parts = [re.escape(p) for p in pattern.split("%")]
    regex = "^" + ".*".join(p.replace("_", ".") for p in parts) + "$"
    return bool(cells.str.contains(regex, case=False, regex=True).any())


def condition_hints(sql: str, tables: Mapping[str, pd.DataFrame], question: str) -> str | None:
    """A hint naming the text conditions of ``sql`` that likely emptied its result, or None.

    Two kinds are named: a condition that no cell of its column meets and that
    resembles no cell (the value is not in that column at all; its most
    frequent values are shown), and a condition met by some cells whose words
    the question never uses (a filter nobody asked for).
    """
    where = re.search(r"\bWHERE\b", sql, re.I)
    if where is None:
        return None
    asked = _words(question)
    resembling = ungrounded_literals(sql, tables, "sql")
    notes: list[str] = []
    for match in _CONDITION.finditer(sql, where.end()):
        raw_column, op, raw_literal = match.groups()
        column = raw_column[1:-1].replace('""', '"') if raw_column.startswith('"') else raw_column
        literal = raw_literal.replace("''", "'")
        op = " ".join(op.upper().split())
        cells = _column_cells(tables, column)
        if cells is None or op.startswith("NOT") or literal in resembling:
            continue
        if not _matches(literal, op, cells):
            common = ", ".join(
                repr(v[:_SHOWN_CHARS]) for v in cells.value_counts().index[:_SHOWN_VALUES]
            )
            notes.append(f'no cell of "{column}" is {literal!r} (its values include {common})')
        elif not _mentioned(literal.replace("%", " "), asked):
            notes.append(f'the question does not mention {literal!r} ("{column}" {op} ...)')
    if not notes:
        return None
    return (
        "Hint: "
        + "; ".join(notes[:4])
        + ". Keep only the conditions the question asks for, on values the table has."
    )
