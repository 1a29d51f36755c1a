"""Check the text literals in model-written code against the table's cells.

Small models write ``df['Result'] == 'L'`` when the cells read ``'L 0–3'``, or
``'Try Not to Think'`` when the cell is ``'"Try Not to Think"'``: the filter
matches nothing and the answer comes out empty or 0. :func:`literal_hint`
finds the literals that equal no cell but resemble some, and names the cells
they resemble, so the next attempt can match them. The hint is built from the
code and the table only: it quotes cells, never an answer.
"""

from __future__ import annotations

import ast
import difflib
import math
import re
from collections.abc import Mapping
from typing import Any, Literal

import pandas as pd

from tablerag_agents.tables.sql_safety import quote_literal
from tablerag_agents.tables.values import numbers_in_text

_SQL_LITERAL = re.compile(r"'((?:[^']|'')*)'")
_PY_LITERAL = re.compile(r"""(?<![\w\\])(?:'([^'\\\n]*)'|"([^"\\\n]*)")""")
_MAX_UNIQUE = 20_000
"""Distinct values scanned per column (bounds the cost on huge tables)."""
_IGNORED = {
    "coerce", "raise", "ignore", "int", "float", "str", "object", "string", "category",
    "records", "index", "columns", "first", "last", "left", "right", "inner", "outer",
    "count", "sum", "mean", "min", "max", "median", "size", "nunique", "all", "any",
}  # fmt: skip


def code_literals(code: str, language: Literal["python", "sql"]) -> list[str]:
    """Return the distinct text literals of ``code``, in order of appearance.

    For SQL only single-quoted strings are literals (double quotes name
    columns). For Python, string constants are read from the syntax tree when
    the code parses, else by a regular expression.
    """
    found: list[str] = []
    if language == "sql":
        found = [m.group(1).replace("''", "'") for m in _SQL_LITERAL.finditer(code)]
    else:
        try:
            tree = ast.parse(code)
            consts = [
                n
                for n in ast.walk(tree)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            ]
            consts.sort(key=lambda n: (n.lineno, n.col_offset))
            found = [str(n.value) for n in consts]
        except SyntaxError:
            found = [a or b for a, b in _PY_LITERAL.findall(code)]
    seen: dict[str, None] = {}
    for lit in found:
        if lit.strip() and lit not in seen:
            seen[lit] = None
    return list(seen)


def _text_values(frame: pd.DataFrame) -> dict[str, list[str]]:
    """Distinct non-empty cell texts per column (capped)."""
    out: dict[str, list[str]] = {}
    for col in frame.columns:
        values = frame[col].dropna().astype(str).str.strip()
        uniques = [v for v in pd.unique(values)[:_MAX_UNIQUE] if v]
        if uniques:
            out[str(col)] = uniques
    return out


def column_cells(tables: Mapping[str, pd.DataFrame]) -> dict[str, list[str]]:
    """Distinct non-empty cell texts per column name, over every table (capped)."""
    columns: dict[str, list[str]] = {}
    for frame in tables.values():
        for col, values in _text_values(frame).items():
            columns.setdefault(col, []).extend(values)
    return columns


def cells_resembling(literal: str, values: list[str], limit: int) -> list[str]:
    """Cells that contain ``literal`` (ignoring case), else close spellings of it."""
    low = literal.lower()
    contains = [v for v in values if low in v.lower()]
    if contains:
        return contains[:limit]
    lowered = {v.lower(): v for v in values}
    close = difflib.get_close_matches(low, list(lowered), n=limit, cutoff=0.75)
    return [lowered[c] for c in close]


def ungrounded_literals(
    code: str,
    tables: Mapping[str, pd.DataFrame],
    language: Literal["python", "sql"],
    *,
    per_column: int = 3,
) -> dict[str, dict[str, list[str]]]:
    """Map each literal that equals no cell but resembles some to ``{column: cells}``.

    Literals that name a column or table, or that equal a cell exactly, are
    grounded and left out; so are literals that resemble nothing (they may be
    patterns or formats).
    """
    literals = [
        lit
        for lit in code_literals(code, language)
        if lit.lower() not in _IGNORED and len(lit) <= 200
    ]
    if not literals:
        return {}
    names = {str(t) for t in tables} | {str(c) for f in tables.values() for c in f.columns}
    columns = column_cells(tables)
    exact = {v for values in columns.values() for v in values}
    out: dict[str, dict[str, list[str]]] = {}
    for lit in literals:
        if lit in names or lit in exact or lit.strip() in exact:
            continue
        near = {
            col: cells
            for col, values in columns.items()
            if (cells := cells_resembling(lit.strip(), values, per_column))
        }
        if near:
            out[lit] = dict(list(near.items())[:3])
    return out


def literal_hint(
    code: str, tables: Mapping[str, pd.DataFrame], language: Literal["python", "sql"]
) -> str | None:
    """A one-paragraph hint about literals in ``code`` that match no cell, or None."""
    found = ungrounded_literals(code, tables, language)
    if not found:
        return None
    how = (
        "use the exact cell text, or LIKE '%...%'"
        if language == "sql"
        else "use the exact cell text, or .str.contains(..., case=False, regex=False)"
    )
    lines = []
    for lit, near in list(found.items())[:4]:
        where = "; ".join(
            f"column {col!r} has " + ", ".join(repr(c) for c in cells)
            for col, cells in near.items()
        )
        lines.append(f"no cell is exactly {lit!r} ({where})")
    return "Hint: " + "; ".join(lines) + f". To match, {how}."


def grounded_code(
    code: str, tables: Mapping[str, pd.DataFrame], language: Literal["python", "sql"]
) -> tuple[str, dict[str, str]] | None:
    """``code`` with each literal that equals no cell but lies inside exactly one cell
    replaced by that cell's text (``'Los Angeles'`` -> ``'United States, Los Angeles'``).

    Only containment counts (not a close spelling), and only when one distinct cell
    of the tables contains the literal: ``'W'`` inside ``'W 2-1'`` and ``'W 3-0'``
    is left alone. Returns the new code and the replacements, or None when no
    literal qualifies.
    """
    found = ungrounded_literals(code, tables, language, per_column=2)
    swaps: dict[str, str] = {}
    for lit, near in found.items():
        cells = {cell for values in near.values() for cell in values}
        if len(cells) == 1 and lit.strip().lower() in (cell := cells.pop()).lower():
            swaps[lit] = cell
    if not swaps:
        return None
    for lit, cell in swaps.items():
        if language == "sql":
            code = code.replace(quote_literal(lit), quote_literal(cell))
        else:
            for quote in ("'", '"'):
                code = code.replace(f"{quote}{lit}{quote}", repr(cell))
    return code, swaps


def swaps_note(swaps: Mapping[str, str]) -> str:
    """The trace note of a :func:`grounded_code` rewrite."""
    pairs = ", ".join(f"{a!r} -> {b!r}" for a, b in swaps.items())
    return f"literals matched to cells: {pairs}"


def looks_empty(value: Any) -> bool:
    """True for results a failed filter typically gives: empty, None, NaN or 0."""
    if value is None:
        return True
    if isinstance(value, pd.DataFrame | pd.Series | pd.Index | list | tuple | set | dict):
        return len(value) == 0
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return value == 0 or (isinstance(value, float) and math.isnan(value))
    return isinstance(value, str) and value.strip().lower() in {"", "nan", "none", "0"}


_NUMBER_WORDS = {
    "once": 1, "twice": 2, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
    "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10,
}  # fmt: skip
_SQL_NUMBER_FILTER = re.compile(
    r"""("(?:[^"]|"")+"|[A-Za-z_]\w*)\s*=\s*('?)(-?\d+(?:\.\d+)?)\2(?![\w.'-])"""
)


def _question_numbers(question: str) -> set[float]:
    """Numbers a question states: digits (``1990``, ``1st``, ``1,000``) and number words."""
    text = question.lower()
    found = numbers_in_text(text)
    found |= {float(v) for w, v in _NUMBER_WORDS.items() if re.search(rf"\b{w}\b", text)}
    return found


def unasked_number_filters(sql: str, question: str) -> list[str]:
    """Equality filters on a number the question never states (``"Round" = 1``).

    Small models add such conditions from the table's first rows; a filter the
    question does not ask for silently narrows the answer. Only conditions that
    compare a column with a bare number (quoted or not) count; numbers written
    as digits or words in the question are taken as asked for.
    """
    upper = sql.upper()
    where = upper.find("WHERE")
    if where < 0:
        return []
    asked = _question_numbers(question)
    out: list[str] = []
    for match in _SQL_NUMBER_FILTER.finditer(sql, where):
        if float(match.group(3)) not in asked:
            out.append(match.group(0).strip())
    return out
