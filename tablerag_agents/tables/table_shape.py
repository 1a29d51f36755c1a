"""Rows that are not entries, and tables stored on their side.

- :func:`repeated_header_rows`: body rows that repeat the column names (tables
  pasted from several sections repeat their header).
- :func:`summary_rows`: totals and other summaries of the rows above or
  below (``"Total"``, ``"Grand total"``, ``"Totals"``, ``"Overall"``, ``"Average"``).
- :func:`is_transposed` and :func:`transpose`: a table whose entries are its
  columns and whose rows are attributes (a climate table with one column per
  month and rows "Average high", "Precipitation"...).

Each rule reads only the table, never a dataset's layout.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from tablerag_agents.tables.cell_parsing import (
    core_text,
    is_missing_text,
    parse_date,
    parse_duration,
    parse_quantity,
)
from tablerag_agents.tables.cleaning import normalize_column_names

_LETTER = re.compile(r"[^\W\d_]")
_SUMMARY = re.compile(
    r"^(?:(?:grand |sub-?)?totals?(?: (?:for|of|in) .+| \(.*\))?|overall|sum|average|mean"
    r"|all(?: \w+)? total)\s*:?$",
    re.I,
)
_SUMMARY_INITIALS = frozenset("tgsoam")
"""First letters of the summary labels (a cheap test before the pattern)."""
_UNIT_WORDS = (
    "mm|cm|m|km|in|inch|inches|ft|feet|mi|miles|g|kg|mg|µg|lb|lbs|oz|kj|kcal|cal|l|ml|"
    "h|hours|days|tons|tonnes|t|kw|mw|hp|mph|km/h|m/s|%"
)
_MEASURE_UNIT = re.compile(rf"^(?:{_UNIT_WORDS})$", re.I)
_UNIT_LABEL = re.compile(rf"°|\((?:[^()]* )?(?:{_UNIT_WORDS})\)", re.I)
_MAX_ATTRIBUTE_ROWS = 60
"""Longer tables are lists of entries (and reading every cell would cost time)."""
_KIND_MARGIN = 0.25
"""Rows must be this much more uniform in kinds than columns to read as attributes."""
_LABEL_COLUMNS = 3
"""Summary labels are looked for in the first columns only."""


def _norm(value: object) -> str:
    if value is None or value is pd.NA or value != value:
        return ""
    text = value if isinstance(value, str) else str(value)
    return " ".join(text.split()).casefold() if text else ""


def _is_data_value(name: str) -> bool:
    core = core_text(name)
    quantity = parse_quantity(core)
    if quantity is not None and (quantity.currency or _MEASURE_UNIT.match(quantity.unit)):
        return True
    return parse_date(core) is not None


def repeated_header_rows(df: pd.DataFrame) -> list[int]:
    """Positions of body rows that repeat the header.

    A row repeats the header when at least two of its cells (all of them in a
    table of one or two columns) equal their column's name, and such cells are
    at least half of its non-empty cells. Only names with a letter count, so a
    row of years under year-named columns is data; a header holding a date or a
    measure (``"27 November 1999"``, ``"188 kg"``) is itself a data row, and then
    no row is taken for a header.
    """
    names = [_norm(c) for c in df.columns]
    if any(_is_data_value(str(c)) for c in df.columns):
        return []
    usable = [i for i, n in enumerate(names) if _LETTER.search(n)]
    if not usable:
        return []
    need = len(df.columns) if len(df.columns) <= 2 else 2
    hits = np.zeros(len(df), dtype=int)
    filled = np.zeros(len(df), dtype=int)
    for i, column in enumerate(df.columns):
        values = df[column].tolist()
        filled += np.array([_norm(v) != "" for v in values], dtype=int)
        if i in usable:
            longest = 2 * len(names[i]) + 8  # longer cells cannot equal the name
            hits += np.array(
                [isinstance(v, str) and len(v) <= longest and _norm(v) == names[i] for v in values],
                dtype=int,
            )
    rows = (hits >= need) & (hits * 2 >= filled)
    return [int(i) for i in np.flatnonzero(rows)]


def summary_label(value: object) -> bool:
    """True for a cell that labels a summary row (``"Total"``, ``"Grand Total"``,
    ``"Total for Danish part:"``, ``"Totals"``, ``"Overall"``, ``"Average"``)."""
    if not isinstance(value, str) or value.lstrip()[:1].lower() not in _SUMMARY_INITIALS:
        return False
    return bool(_SUMMARY.match(core_text(value)))


def summary_rows(df: pd.DataFrame, *, skip: list[int] | None = None) -> list[int]:
    """Positions of rows labelled as totals or summaries in one of the first columns.

    ``"Total Recall"`` (a title) is no label; ``"Total"``, ``"Totals"`` and
    ``"Total (12 entries)"`` are. Rows in ``skip`` are left out.
    """
    found: set[int] = set()
    for column in list(df.columns)[:_LABEL_COLUMNS]:
        for pos, value in enumerate(df[column].tolist()):
            if summary_label(value):
                found.add(pos)
    return sorted(found - set(skip or []))


def _kind(value: object) -> tuple[str, str]:
    """Coarse kind of a cell (``n`` number, ``d`` date, ``e`` empty, ``t`` text) and,
    for numbers, their unit word."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return "e", ""
    if isinstance(value, int | float | np.number) and not isinstance(value, bool):
        return "n", ""
    core = core_text(str(value))
    if is_missing_text(core):
        return "e", ""
    quantity = parse_quantity(core)
    if quantity is not None:
        return "n", quantity.unit.lower()
    if parse_duration(core) is not None:
        return "n", "s"
    return ("d", "") if parse_date(core) is not None else ("t", "")


def _purity(kinds: np.ndarray) -> float:
    """Mean share of the most common non-empty kind in each line (row) of ``kinds``."""
    shares = []
    for line in kinds:
        filled = [k for k in line if k != "e"]
        if len(filled) >= 2:
            shares.append(max(filled.count(k) for k in set(filled)) / len(filled))
    return float(np.mean(shares)) if shares else 1.0


def _units_by_row(units: np.ndarray, kinds: np.ndarray) -> bool:
    """True when each row's numbers share one unit and the rows use three units or more."""
    row_units: list[str] = []
    for line_units, line_kinds in zip(units, kinds, strict=True):
        found = {u for u, k in zip(line_units, line_kinds, strict=True) if k == "n"}
        if len(found) > 1:
            return False
        row_units.extend(found)
    return len({u for u in row_units if u}) >= 3


def is_transposed(df: pd.DataFrame) -> bool:
    """True when the rows are attributes and the columns entries.

    The first column must hold distinct text labels, with 2 to
    :data:`_MAX_ATTRIBUTE_ROWS` rows and three further columns. Then the table
    is transposed when its rows are clearly more uniform than its columns in the
    kinds of their cells (number,
    date, text), or when its body is numbers whose unit changes from row to row:
    written in the cells (``"110 km/h"`` in one row, ``"740 kW"`` in the next) or
    in most row labels (``"Precipitation mm (inches)"``, ``"Water (g)"``). A grid
    of one quantity (schools by year) is not transposed: either way round is a
    table of entries.
    """
    if not 2 <= len(df) <= _MAX_ATTRIBUTE_ROWS or df.shape[1] < 4:
        return False
    labels = [_norm(v) for v in df.iloc[:, 0].tolist()]
    if any(not label or not _LETTER.search(label) for label in labels):
        return False
    if len(set(labels)) < len(labels):
        return False
    cells = [[_kind(v) for v in row] for row in df.iloc[:, 1:].itertuples(index=False)]
    kinds = np.array([[k for k, _ in row] for row in cells])
    if _purity(kinds) - _purity(kinds.T) >= _KIND_MARGIN:
        return True
    filled = kinds != "e"
    if not filled.any() or (kinds == "n").sum() < 0.8 * filled.sum():
        return False
    units = np.array([[u for _, u in row] for row in cells])
    if _units_by_row(units, kinds):
        return True
    with_unit = sum(bool(_UNIT_LABEL.search(label)) for label in labels)
    return with_unit * 2 >= len(labels)


def transpose(df: pd.DataFrame) -> pd.DataFrame:
    """Turn a table on its side: one row per former column (after the first), whose
    names fill a column named like the first column; one column per former row,
    named by its label (made unique and non-empty)."""
    labels, _ = normalize_column_names(df.iloc[:, 0].tolist())
    first = str(df.columns[0])
    names, _ = normalize_column_names([first, *labels])
    body = df.iloc[:, 1:].T
    out = pd.DataFrame({names[0]: [str(c) for c in df.columns[1:]]})
    for i, name in enumerate(names[1:]):
        out[name] = body.iloc[:, i].tolist()
    return out
