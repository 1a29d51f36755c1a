"""Repair a filter on a column the table lacks, using the cells the filter names.

Small models often filter on a column the question suggests but the table does
not have: ``WHERE "Country" = 'Finland'`` on a table whose column is
``Nationality``, or ``WHERE "Year" = 1990`` on a table of one year's results,
whose year is only in the caption. DuckDB then reports the column missing. When
every use of the missing column compares it with constants (``=``, ``<>``,
``LIKE``, ``IN (...)``), the constants decide:

- they are the cells of exactly one column (else, when no cell equals one, they
  lie in or closely spell the cells of exactly one column): the filter is moved
  to that column (``"Nationality" = 'Finland'``);
- they resemble no cell of any column: the condition asks for context the table
  does not hold, so it is dropped from its ``WHERE`` (only a plain ``AND`` of
  conditions, never under ``OR``, ``CASE WHEN`` or ``ON``);
- anything else (several columns hold them, a constant is a column's name): no
  repair, and the model's retry sees the error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from tablerag_agents.solve.grounding import cells_resembling, column_cells
from tablerag_agents.solve.sql_repair import MISSING_COLUMN, SEGMENTS, scan_depths
from tablerag_agents.tables.sql_safety import quote_ident

_LITERAL = r"(?:'(?:[^']|'')*'|[-+]?\d+(?:\.\d+)?)"
_OPERATOR = r"(?:<>|!=|=|\bNOT\s+I?LIKE\b|\bI?LIKE\b)"
_LIST_OPERATOR = r"\b(?:NOT\s+)?IN\b"
_KEYWORDS = re.compile(
    r"\b(?:WHERE|AND|OR|NOT|BETWEEN|WHEN|THEN|ELSE|END|ON|HAVING|SELECT|FROM|GROUP\s+BY"
    r"|ORDER\s+BY|LIMIT|OFFSET|UNION|EXCEPT|INTERSECT|QUALIFY|WINDOW)\b",
    re.I,
)
_CLAUSE_END = re.compile(
    r"GROUP|ORDER|LIMIT|OFFSET|UNION|EXCEPT|INTERSECT|QUALIFY|WINDOW|HAVING", re.I
)


_MAX_SQL_CHARS = 20_000
"""Longer queries are left to the model's retry (the repair's work grows with length)."""
_MAX_DROPS = 20


@dataclass(frozen=True)
class _Comparison:
    """One use of the missing column: ``sql[start:end]`` compares it with ``values``."""

    start: int
    end: int
    values: tuple[str, ...]


def _reference(name: str) -> str:
    """A regex for a reference to column ``name``: quoted, or bare if it is a plain word."""
    quoted = re.escape(quote_ident(name))
    if re.fullmatch(r"[A-Za-z_]\w*", name):
        return rf"(?:{quoted}|(?<![\w.\"])\b{re.escape(name)}\b(?![\w(\"]))"
    return quoted


def _constants(text: str) -> tuple[str, ...]:
    """The constants of a literal or a parenthesised list of literals, unquoted."""
    return tuple(
        m.group(0)[1:-1].replace("''", "'") if m.group(0).startswith("'") else m.group(0)
        for m in re.finditer(_LITERAL, text)
    )


def _quoted(sql: str) -> list[bool]:
    """For each character of ``sql``: is it part of a string literal, or inside the
    quotes of an identifier (where no reference can start)?"""
    mask = [False] * len(sql)
    for m in SEGMENTS.finditer(sql):
        start = m.start() if sql[m.start()] == "'" else m.start() + 1
        mask[start : m.end()] = [True] * (m.end() - start)
    return mask


def _references(sql: str, name: str) -> list[tuple[int, int]]:
    """The spans where ``sql`` refers to column ``name`` (outside string literals)."""
    quoted = _quoted(sql)
    return [m.span() for m in re.finditer(_reference(name), sql, re.I) if not quoted[m.start()]]


def _comparisons(sql: str, name: str) -> list[_Comparison]:
    """Every comparison of column ``name`` with constants in ``sql``."""
    pattern = re.compile(
        rf"{_reference(name)}(?P<compared>\s*(?:{_OPERATOR}\s*{_LITERAL}"
        rf"|{_LIST_OPERATOR}\s*\(\s*{_LITERAL}(?:\s*,\s*{_LITERAL})*\s*\)))",
        re.I,
    )
    quoted = _quoted(sql)
    return [
        _Comparison(m.start(), m.end(), _constants(m.group("compared")))
        for m in pattern.finditer(sql)
        if not quoted[m.start()]
    ]


def _drop_condition(sql: str, comparison: _Comparison) -> str | None:
    """``sql`` without ``comparison``, when it is one of the ``AND``-ed conditions
    of a ``WHERE`` (with no ``OR`` or ``BETWEEN`` beside it); else None."""
    blank, depths = scan_depths(sql)
    depth = depths[comparison.start]
    left = comparison.start
    while left > 0 and depths[left - 1] >= depth:
        left -= 1
    right = comparison.end
    while right < len(sql) and depths[right] >= depth:
        right += 1
    words = [
        m
        for m in _KEYWORDS.finditer(blank, left, right)
        if depths[m.start()] == depth and not (comparison.start <= m.start() < comparison.end)
    ]
    before = [m for m in words if m.start() < comparison.start]
    wheres = [i for i, m in enumerate(before) if m.group(0).upper() == "WHERE"]
    if not wheres or any(m.group(0).upper() != "AND" for m in before[wheres[-1] + 1 :]):
        return None
    where = before[wheres[-1]]
    after = [m for m in words if m.start() >= comparison.end]
    clause_end = next((m.start() for m in after if _CLAUSE_END.match(m.group(0))), right)
    inside = [m for m in after if m.start() < clause_end]
    if any(m.group(0).upper() != "AND" for m in inside):
        return None
    ands = before[wheres[-1] + 1 :] + inside
    bounds = [where.end(), *[x for m in ands for x in (m.start(), m.end())], clause_end]
    spans = [(bounds[i], bounds[i + 1]) for i in range(0, len(bounds), 2)]
    mine = next(i for i, (lo, hi) in enumerate(spans) if lo <= comparison.start < hi)
    if sql[slice(*spans[mine])].strip() != sql[comparison.start : comparison.end]:
        return None  # the comparison is only part of its condition
    kept = [sql[lo:hi].strip() for i, (lo, hi) in enumerate(spans) if i != mine]
    head = sql[: where.start()].rstrip()
    if kept:
        head += " WHERE " + " AND ".join(kept)
    tail = sql[clause_end:].strip()
    return head + ("" if not tail or tail.startswith(")") else " ") + tail


def _probe(constant: str) -> str:
    """The text a constant asks cells for: a ``LIKE`` pattern's longest fixed part."""
    parts = re.split(r"[%_]+", constant.strip()) if "%" in constant else [constant.strip()]
    return max(parts, key=len).strip()


def repair_missing_column_filter(
    sql: str, error: str, tables: Mapping[str, pd.DataFrame]
) -> str | None:
    """Move or drop the filters on the column DuckDB could not find (module docstring).

    Returns the fixed SQL or None.
    """
    m = MISSING_COLUMN.search(error)
    if not m or len(sql) > _MAX_SQL_CHARS:
        return None
    name = m.group(1).replace('""', '"')
    sql = sql.strip().rstrip(";").rstrip()
    comparisons = _comparisons(sql, name)
    references = _references(sql, name)
    if not comparisons or len(comparisons) != len(references):
        return None
    constants = [c for comparison in comparisons for c in comparison.values]
    names = {str(t).lower() for t in tables} | {
        str(c).lower() for frame in tables.values() for c in frame.columns
    }
    if not constants or any(c.lower() in names or not c.strip() for c in constants):
        return None
    probes = [_probe(c) for c in constants]
    if not all(probes):
        return None
    cells = column_cells(tables)
    wanted = {p.lower() for p in probes}
    holders = {col for col, values in cells.items() if wanted & {v.lower() for v in values}}
    if not holders:  # no cell equals a value: the columns of cells that resemble one
        holders = {
            col
            for col, values in cells.items()
            if any(cells_resembling(p, values, 1) for p in probes)
        }
    if len(holders) == 1:
        real = quote_ident(holders.pop())
        fixed = sql
        for start, end in reversed(references):
            fixed = fixed[:start] + real + fixed[end:]
        return fixed
    if holders or len(comparisons) > _MAX_DROPS:
        return None
    fixed = sql
    while found := _comparisons(fixed, name):
        dropped = _drop_condition(fixed, found[0])
        if dropped is None:
            return None
        fixed = dropped
    return fixed if fixed != sql else None
