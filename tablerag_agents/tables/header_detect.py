"""Find the tables in a raw spreadsheet grid: stacked blocks, title rows, multi-row headers.

Deterministic, generic and conservative rules over the cell values (and the
workbook's merged ranges), so a plain one-row-header table reads as before:

- merged ranges: the merge's value is copied into every cell it covers;
- blocks: a sheet splits at a fully empty row only when the next non-empty row
  starts a new table (a title row or a header-like row, see below); other empty
  rows are simply dropped (past :data:`MAX_BLOCKS` tables, the sheet is one table);
- title rows: leading rows with one non-empty text cell above a wider row are
  the block's title, not its header;
- header depth: the row below the header is a second header row when all its
  non-empty cells are text, the row above had a merged or blank cell over it,
  and some column where it holds text holds mostly numbers or dates below;
  the labels are flattened to ``"Group / Column"``;
- columns empty in a block (spacer columns) are dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from numbers import Number
from typing import Any

import pandas as pd

#: A merged range: first row, first column, last row, last column (0-based, inclusive).
Merge = tuple[int, int, int, int]

_NUMBER = re.compile(r"[-+]?[$€£]?\s*\d[\d,]*(\.\d+)?\s*%?")
_MAX_TITLE_ROWS = 3
_MAX_HEADER_ROWS = 3
#: A sheet that would split into more tables than this is read as one table.
MAX_BLOCKS = 50


@dataclass
class Block:
    """One table found on a sheet: its header labels, body rows and title."""

    header: list[Any]
    body: pd.DataFrame
    title: str | None = None
    header_rows: int = 1


def _empty(value: Any) -> bool:
    if isinstance(value, str):
        return not value.strip()
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _text(value: Any) -> bool:
    """A non-empty string that is not a number."""
    return isinstance(value, str) and bool(value.strip()) and not _NUMBER.fullmatch(value.strip())


def _typed(value: Any) -> bool:
    """A number or a date (the kind of cell a header row never holds)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, Number | date | datetime | time | timedelta | pd.Timestamp):
        return not _empty(value)
    return isinstance(value, str) and bool(_NUMBER.fullmatch(value.strip()))


def fill_merges(grid: list[list[Any]], merges: list[Merge]) -> None:
    """Copy each merged range's top-left value into every cell of the range (in place)."""
    rows = len(grid)
    for r0, c0, r1, c1 in merges:
        if r0 >= rows or c0 >= len(grid[r0]):
            continue
        value = grid[r0][c0]
        for r in range(r0, min(r1, rows - 1) + 1):
            for c in range(c0, min(c1, len(grid[r]) - 1) + 1):
                grid[r][c] = value


def _filled(row: list[Any]) -> list[int]:
    return [c for c, v in enumerate(row) if not _empty(v)]


def _typed_below(grid: list[list[Any]], row: int, stop: int, col: int) -> bool:
    """Whether column ``col`` holds mostly numbers/dates in rows ``row+1 .. stop-1``."""
    cells = [grid[r][col] for r in range(row + 1, stop) if not _empty(grid[r][col])]
    return bool(cells) and sum(_typed(v) for v in cells) * 2 > len(cells)


def _header_like(grid: list[list[Any]], row: int, stop: int) -> bool:
    """All non-empty cells text (at least two), over a column of numbers or dates."""
    cols = _filled(grid[row])
    if len(cols) < 2 or not all(_text(grid[row][c]) for c in cols):
        return False
    return any(_typed_below(grid, row, stop, c) for c in cols)


def _title_rows(grid: list[list[Any]], start: int, stop: int) -> int:
    """How many rows from ``start`` are title rows (one text cell above a wider row)."""
    n = 0
    while n < _MAX_TITLE_ROWS and start + n + 1 < stop:
        cols = _filled(grid[start + n])
        below = _filled(grid[start + n + 1])
        if len(cols) != 1 or not _text(grid[start + n][cols[0]]) or len(below) < 2:
            break
        n += 1
    return n


def _starts_table(grid: list[list[Any]], row: int, stop: int) -> bool:
    """Whether the non-empty run ``row .. stop-1`` begins a new table."""
    head = row + _title_rows(grid, row, stop)
    return head + 1 < stop and _header_like(grid, head, stop)


def _runs(grid: list[list[Any]]) -> list[tuple[int, int]]:
    """Row ranges of consecutive non-empty rows."""
    runs: list[tuple[int, int]] = []
    start: int | None = None
    for r, row in enumerate(grid):
        if _filled(row):
            start = r if start is None else start
        elif start is not None:
            runs.append((start, r))
            start = None
    if start is not None:
        runs.append((start, len(grid)))
    return runs


def _blocks(grid: list[list[Any]]) -> list[list[int]]:
    """Rows of each table on the sheet (empty rows left out)."""
    blocks: list[list[int]] = []
    has_table = False  # the last block has a row of two or more cells (not titles only)
    for start, stop in _runs(grid):
        if not blocks or (has_table and _starts_table(grid, start, stop)):
            blocks.append([])
            has_table = False
        blocks[-1].extend(range(start, stop))
        has_table = has_table or any(len(_filled(grid[r])) > 1 for r in range(start, stop))
    if len(blocks) > MAX_BLOCKS:
        return [[r for rows in blocks for r in rows]]
    return blocks


def _more_header(rows: list[list[Any]], depth: int, merged_rows: set[int]) -> bool:
    """Whether ``rows[depth]`` is one more header row below ``rows[:depth]``."""
    if depth >= _MAX_HEADER_ROWS or depth + 1 >= len(rows):
        return False
    row, above = rows[depth], rows[depth - 1]
    cols = _filled(row)
    if len(cols) < 2 or not all(_text(row[c]) for c in cols):
        return False
    grouped = (depth - 1) in merged_rows or any(_empty(above[c]) for c in cols)
    return grouped and _header_like(rows, depth, len(rows))


def _flatten(rows: list[list[Any]], merged: bool) -> list[Any]:
    """One label per column from several header rows: ``"Group / Column"``."""
    filled = [list(r) for r in rows]
    if not merged:  # an unmerged group row: a group label spans the blanks on its right
        for row in filled[:-1]:
            for c in range(1, len(row)):
                if _empty(row[c]) and not _empty(row[c - 1]):
                    row[c] = row[c - 1]
    labels: list[Any] = []
    for c in range(len(filled[0])):
        parts: list[str] = []
        for row in filled:
            if not _empty(row[c]):
                part = str(row[c]).strip()
                if not parts or parts[-1] != part:
                    parts.append(part)
        labels.append(" / ".join(parts) if parts else None)
    return labels


def find_blocks(raw: pd.DataFrame, merges: list[Merge] | None = None) -> list[Block]:
    """The tables on a sheet read with ``header=None`` (cells at their sheet positions)."""
    merges = merges or []
    grid = raw.astype(object).to_numpy().tolist()
    if not grid:
        return []
    fill_merges(grid, merges)
    across = {r for r0, c0, r1, c1 in merges if c1 > c0 for r in range(r0, r1 + 1)}
    found: list[Block] = []
    for rows in _blocks(grid):
        stop = len(rows)
        cells = [grid[r] for r in rows]
        keep = [c for c in range(len(grid[0])) if any(not _empty(row[c]) for row in cells)]
        cells = [[row[c] for c in keep] for row in cells]
        titles = _title_rows(cells, 0, stop)
        title = " ".join(str(v).strip() for row in cells[:titles] for v in row if not _empty(v))
        cells = cells[titles:]
        block_rows = rows[titles:]
        merged_rows = {i for i, r in enumerate(block_rows) if r in across}
        depth = 1
        while _more_header(cells, depth, merged_rows):
            depth += 1
        header = (
            list(cells[0]) if depth == 1 else _flatten(cells[:depth], bool(merged_rows & {0, 1}))
        )
        if titles:
            header_cols = [c for c in range(len(keep)) if any(not _empty(r[c]) for r in cells)]
            header = [header[c] for c in header_cols]
            cells = [[row[c] for c in header_cols] for row in cells]
        body = pd.DataFrame(cells[depth:], columns=range(len(header))).infer_objects()
        found.append(Block(header=header, body=body, title=title or None, header_rows=depth))
    return found


def csv_group_header(header: list[Any], rows: list[list[Any]]) -> list[Any] | None:
    """Flattened labels when the first of ``rows`` is a second header row below ``header``.

    For text files (no merged ranges): a group row such as ``,Q1,,Q2,`` above
    ``Region,Online,Store,Online,Store``; ``None`` when ``rows[0]`` is data.
    """
    grid = [list(header), *(list(r) for r in rows)]
    if not _more_header(grid, 1, set()) or _more_header(grid, 2, set()):
        return None
    return _flatten(grid[:2], merged=False)
