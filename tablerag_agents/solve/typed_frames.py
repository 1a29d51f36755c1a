"""Typed companion columns and row numbers in the solvers' tables, and how prompts name them.

Two switches of the SQL, process_df and PyReAct solvers (and of the graph's
``Context``), both off by default:

- ``typed_columns``: each table becomes its
  :func:`~tablerag_agents.tables.typed_table.build_typed_table` view: parsed
  companions beside the original columns (``Population__num``, ``Time__sec``,
  ``Date__date``, ``Term__from``/``Term__to``), total rows flagged
  (``is_summary``), repeated header rows removed, transposed tables turned;
- ``row_numbers``: a ``row_no`` column (1 = first row), so that questions about
  order ("after", "before", "next", "last") can be answered in SQL.

The prompt lists every added column with what it holds, and adds one short
note per feature (files ``prompts/typed_columns.txt``,
``row_order_{sql,python}.txt``, ``summary_rows.txt``, ``transposed_table.txt``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Literal

import numpy as np
import pandas as pd

from tablerag_agents.prompts import load_prompt
from tablerag_agents.tables.table_shape import summary_label
from tablerag_agents.tables.typed_table import TypedTable, build_typed_table

Language = Literal["sql", "python"]


def typed_views(
    tables: Mapping[str, pd.DataFrame], *, typed_columns: bool, row_numbers: bool
) -> dict[str, TypedTable]:
    """The typed view of each table (by id), or ``{}`` when both switches are off."""
    if not (typed_columns or row_numbers):
        return {}
    return {
        tid: build_typed_table(df, types=typed_columns, row_numbers=row_numbers)
        for tid, df in tables.items()
    }


def _same_numbers(cleaned: pd.Series, parsed: pd.Series) -> bool:
    """True if a cleaned original column holds the companion's numbers."""
    if not pd.api.types.is_numeric_dtype(cleaned) or not pd.api.types.is_numeric_dtype(parsed):
        return False
    a = cleaned.to_numpy(dtype=float, na_value=np.nan)
    b = parsed.to_numpy(dtype=float, na_value=np.nan)
    return bool(
        np.array_equal(np.isnan(a), np.isnan(b)) and np.allclose(a[~np.isnan(a)], b[~np.isnan(b)])
    )


def cleaned_view(view: TypedTable, clean: Callable[[pd.DataFrame], pd.DataFrame]) -> TypedTable:
    """``view`` with its original columns passed through ``clean`` (the solvers'
    ``clean_numbers``), dropping companions the cleaned original already equals
    (``"45%"`` cleaned to 45 needs no ``__num`` beside it)."""
    frame = clean(view.frame)
    redundant = [
        name
        for name, base in view.companions.items()
        if not pd.api.types.is_numeric_dtype(view.frame[base])
        and _same_numbers(frame[base], frame[name])
    ]
    companions = {k: v for k, v in view.companions.items() if k not in redundant}
    return dataclasses.replace(view, frame=frame.drop(columns=redundant), companions=companions)


def column_note(view: TypedTable, column: str) -> str:
    """What ``column`` of the view holds, for the prompt's column list (``""``: nothing
    the dtype and the column's name do not already say)."""
    if column == view.row_column:
        return "row position, 1 = first row"
    if column == view.summary_column:
        return "true on total/summary rows"
    base = view.companions.get(column)
    profile = view.profiles.get(base if base is not None else column)
    if profile is None:
        return ""
    if base is None and any(b == column for b in view.companions.values()):
        return ""  # its companion, listed next, says what it holds
    if profile.is_span:
        spans = [c for c, b in view.companions.items() if b == base]  # first, last
        return "last year, empty if ongoing" if spans.index(column) == 1 else "first year"
    if profile.type == "list":
        return f"list, items separated by {profile.separator!r}"
    if profile.type == "percentage":
        return "percentage: 45 means 45%"
    if profile.type == "duration":
        return "duration in seconds"
    kind = profile.type if profile.type in ("money", "year") else ""
    unit = f"in {profile.unit}" if profile.unit else ""
    return " ".join(part for part in (kind, unit) if part)


def table_notes(view: TypedTable, name: str, language: Language) -> list[str]:
    """The prompt notes about a table's added columns and shape (main table only)."""
    q = '"' if language == "sql" else "'"
    notes = []
    if view.transposed:
        label = str(view.frame.columns[1 if view.row_column else 0])
        notes.append(load_prompt("transposed_table").strip().format(label=f"{q}{label}{q}"))
    if view.companions:
        notes.append(load_prompt("typed_columns").strip())
    if view.summary_column:
        labels = view.frame.iloc[view.summary_rows, :].astype(str)
        shown = sorted(
            {str(v) for v in labels.to_numpy().ravel() if summary_label(str(v))}, key=len
        )[:3]
        notes.append(
            load_prompt("summary_rows")
            .strip()
            .format(flag=f"{q}{view.summary_column}{q}", labels=", ".join(repr(s) for s in shown))
        )
    if view.row_column:
        notes.append(
            load_prompt(f"row_order_{language}").strip().format(row=view.row_column, table=name)
        )
    return notes
