"""A table as solvers should see it: typed companion columns, row numbers, marked totals.

:func:`build_typed_table` never changes a cell of the original columns. It adds:

- ``<column>__num`` (integer, decimal, percentage, money, year),
  ``<column>__sec`` (durations in seconds), ``<column>__date`` (dates), or
  ``<column>__from`` and ``<column>__to`` (year spans) beside each column whose
  text differs from its value (see :mod:`tablerag_agents.tables.column_types`);
- ``row_no``: each row's position, 1 = the first row, so that "the album after
  X" or "the last film" survive SQL, which has no row order;
- ``is_summary``: true on total/summary rows (``"Total"``, ``"Grand total"``...),
  when the table has any. They stay in the table, marked, and are left out of
  the type decision;

and it removes body rows that repeat the header, and turns a table stored with
its entries as columns (rows of attributes) on its side. A name already taken
gets a suffix (``row_no_2``). :meth:`TypedTable.origin` maps any cell of the new
frame back to the original cell it shows, so answers cite original cells.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tablerag_agents.tables.column_types import ColumnProfile, profile_columns
from tablerag_agents.tables.table_shape import (
    is_transposed,
    repeated_header_rows,
    summary_rows,
    transpose,
)

logger = logging.getLogger(__name__)

ROW_COLUMN = "row_no"
SUMMARY_COLUMN = "is_summary"
DEFAULT_MAX_TYPED_CELLS = 100_000
"""Larger tables are not typed (row numbers still apply): typing reads every distinct
cell in Python, about 10 ms per 1,000 cells."""
_SUFFIXES = {"duration": "sec", "date": "date"}
"""Companion suffix by type; every other parsed type is ``num``."""


@dataclass
class TypedTable:
    """A solver's view of one table and the way back to the original cells.

    Attributes:
        frame: What the solver sees: the original columns (values unchanged), the
            companions, ``row_no`` and ``is_summary``.
        source: The original table.
        profiles: The type of each original column of ``frame`` (by name).
        companions: Companion column -> the column it parses.
        row_column: Name of the row-number column, if added.
        summary_column: Name of the summary-row flag, if added.
        header_rows: Positions (in ``source``) of removed rows that repeated the header.
        summary_rows: Positions (in ``frame``) of total/summary rows.
        transposed: ``frame`` is ``source`` turned on its side.
    """

    frame: pd.DataFrame
    source: pd.DataFrame
    profiles: dict[str, ColumnProfile] = field(default_factory=dict)
    companions: dict[str, str] = field(default_factory=dict)
    row_column: str | None = None
    summary_column: str | None = None
    header_rows: list[int] = field(default_factory=list)
    summary_rows: list[int] = field(default_factory=list)
    transposed: bool = False
    sources: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=int))
    """Per row of ``frame``: its row position in ``source`` (for a transposed table,
    the position of the source column it shows)."""

    def origin(self, pos: int, column: str) -> tuple[int, str] | None:
        """The original cell shown at row position ``pos`` and ``column`` of ``frame``.

        Returns ``(row position in source, source column)``, or None for cells
        that show no original cell (row numbers, flags, a transposed table's
        former column names).
        """
        if column in (self.row_column, self.summary_column) or not 0 <= pos < len(self.frame):
            return None
        base = self.companions.get(column, column)
        if base not in self.profiles:
            return None
        if not self.transposed:
            return int(self.sources[pos]), base
        labels = list(self.profiles)
        if base == labels[0]:
            return None  # the former column names are no cells
        return labels.index(base) - 1, str(self.source.columns[int(self.sources[pos])])

    def source_column(self, column: str) -> str:
        """The original column a frame column shows (a companion's base), else itself."""
        return self.companions.get(column, column)


def _free(name: str, taken: set[str]) -> str:
    """``name``, or ``name_2``, ``name_3``... whichever is not taken yet (then taken)."""
    out, n = name, 2
    while out in taken:
        out, n = f"{name}_{n}", n + 1
    taken.add(out)
    return out


def _companions(profile: ColumnProfile) -> list[tuple[str, pd.Series]]:
    """(suffix, values) of the companion columns a profile asks for."""
    if profile.values is None or not profile.differs:
        return []
    if profile.end is not None:
        return [("from", profile.values), ("to", profile.end)]
    return [(_SUFFIXES.get(profile.type, "num"), profile.values)]


def _as_integers(values: pd.Series) -> pd.api.extensions.ExtensionArray | np.ndarray:
    """The values as an array; whole-number floats as nullable integers (``1234``, not
    ``1234.0``)."""
    if not pd.api.types.is_float_dtype(values.dtype):
        return values.to_numpy()
    arr = values.to_numpy(dtype=float)
    missing = np.isnan(arr)
    known = arr[~missing]
    if not len(known) or np.abs(known).max() >= 2**53 or not (known == np.round(known)).all():
        return arr
    return pd.arrays.IntegerArray(np.where(missing, 0, arr).astype(np.int64), missing)


def build_typed_table(
    df: pd.DataFrame,
    *,
    types: bool = True,
    row_numbers: bool = True,
    max_cells: int | None = DEFAULT_MAX_TYPED_CELLS,
) -> TypedTable:
    """Build the solver's view of ``df`` (see the module docstring).

    Args:
        df: The original table (left unchanged).
        types: Type the columns, add companions, mark summary rows, drop repeated
            header rows and turn transposed tables.
        row_numbers: Add the ``row_no`` column.
        max_cells: Leave tables with more cells untyped, to bound the time
            (``None``: no limit).
    """
    if types and max_cells is not None and df.size > max_cells:
        logger.info("table of %d cells not typed (max_cells=%d)", df.size, max_cells)
        types = False
    transposed = types and is_transposed(df)
    oriented = transpose(df) if transposed else df
    sources = np.arange(1, df.shape[1]) if transposed else np.arange(len(df))
    headers = repeated_header_rows(oriented) if types and not transposed else []
    if headers:
        keep = np.ones(len(oriented), dtype=bool)
        keep[headers] = False
        oriented, sources = oriented.iloc[keep], sources[keep]
    summaries = summary_rows(oriented) if types else []
    skip = np.zeros(len(oriented), dtype=bool)
    skip[summaries] = True
    profiles = profile_columns(oriented, skip=skip) if types else {}
    taken = {str(c) for c in oriented.columns}
    columns: dict[str, pd.Series | np.ndarray] = {}
    companions: dict[str, str] = {}
    row_column = _free(ROW_COLUMN, taken) if row_numbers else None
    if row_column:
        columns[row_column] = np.arange(1, len(oriented) + 1)
    for name, series in oriented.items():
        columns[str(name)] = series
        for suffix, values in _companions(profiles[str(name)]) if types else []:
            companion = _free(f"{name}__{suffix}", taken)
            columns[companion] = _as_integers(values)
            companions[companion] = str(name)
    summary_column = _free(SUMMARY_COLUMN, taken) if summaries else None
    if summary_column:
        columns[summary_column] = skip
    frame = pd.DataFrame(columns, index=oriented.index)
    if not profiles:
        profiles = {str(c): ColumnProfile(str(c), "text") for c in oriented.columns}
    return TypedTable(
        frame=frame,
        source=df,
        profiles=profiles,
        companions=companions,
        row_column=row_column,
        summary_column=summary_column,
        header_rows=headers,
        summary_rows=summaries,
        transposed=transposed,
        sources=sources,
    )
