"""Compact table previews for solver prompts, and numeric clean-up of string columns."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from tablerag_agents.models.tokens import count_tokens
from tablerag_agents.prompts import load_prompt
from tablerag_agents.solve.base import SolverContext
from tablerag_agents.solve.typed_frames import cleaned_view, column_note, table_notes, typed_views
from tablerag_agents.tables.render import CellStyle, TableFormat, render_table
from tablerag_agents.tables.typed_table import ROW_COLUMN, TypedTable
from tablerag_agents.tables.values import column_kind, parse_number

_MISSING = {"", "-", "\u2013", "\u2014", "n/a", "na", "none", "null", "nan", "?", "tbd", "tba"}
# Solvers show the whole table when it renders in this many tokens or fewer.
DEFAULT_FULL_TABLE_TOKENS = 1000


def clean_numbers(df: pd.DataFrame) -> pd.DataFrame:
    """Return a copy where text columns holding only numbers become numeric.

    A column converts when every non-missing cell is a plain number (thousands
    separators, currency signs and ``%`` allowed) and at least one is present;
    missing markers (empty, ``-``, ``—``, ``n/a``...) become NaN. Columns with any
    other text (``"4th, Western"``, ``"2001-02"``) are left unchanged, so no
    information is lost.
    """
    out = df.copy()
    for col in out.columns:
        series = out[col]
        if not (series.dtype == object or pd.api.types.is_string_dtype(series)):
            continue
        values: list[float] = []
        ok = True
        for raw in series.tolist():
            text = "" if raw is None else str(raw)
            if text.strip().lower() in _MISSING:
                values.append(np.nan)
                continue
            num = parse_number(text, loose=True)
            if num is None:
                ok = False
                break
            values.append(num)
        if not ok or all(np.isnan(v) for v in values):
            continue
        arr = np.array(values, dtype=float)
        if not np.isnan(arr).any() and np.all(arr == np.round(arr)) and np.abs(arr).max() < 2**53:
            out[col] = arr.astype(np.int64)
        else:
            out[col] = arr
    return out


def solver_tables(
    tables: Mapping[str, pd.DataFrame],
    *,
    clean: bool = True,
    typed_columns: bool = False,
    row_numbers: bool = False,
) -> tuple[dict[str, pd.DataFrame], dict[str, TypedTable]]:
    """The frames a solver's code runs over, and their typed views, both by table id.

    With ``typed_columns`` or ``row_numbers`` each frame is its table's typed view
    (:mod:`tablerag_agents.solve.typed_frames`), else the table itself; with
    ``clean``, number-like text columns become numbers (:func:`clean_numbers`),
    and a companion that only repeats its cleaned column is dropped. The views
    are ``{}`` when both switches are off.
    """
    views = typed_views(tables, typed_columns=typed_columns, row_numbers=row_numbers)
    if clean:
        views = {tid: cleaned_view(view, clean_numbers) for tid, view in views.items()}
    frames = {
        tid: views[tid].frame if tid in views else clean_numbers(df) if clean else df
        for tid, df in tables.items()
    }
    return frames, views


def python_solver_tables(
    ctx: SolverContext, *, clean: bool, typed_columns: bool, row_numbers: bool
) -> tuple[dict[str, pd.DataFrame], dict[str, TypedTable], dict[str, TypedTable]]:
    """The Python solvers' :func:`solver_tables`: frames by their name in code, typed
    views by table id (for citations) and by name in code (for the prompt)."""
    frames, views = solver_tables(
        ctx.tables, clean=clean, typed_columns=typed_columns, row_numbers=row_numbers
    )
    names = ctx.python_names()
    by_name = {name: views[tid] for name, tid in names.items() if tid in views}
    return ctx.python_tables(frames), views, by_name


def dtype_name(series: pd.Series) -> str:
    """Short dtype name for prompts: ``int``, ``float``, ``bool``, ``date`` or ``str``."""
    kind = column_kind(series)
    return {"datetime": "date", "text": "str"}.get(kind, kind)


def markdown_rows(
    df: pd.DataFrame, *, max_rows: int | None = None, max_chars: int = 60, index: bool = False
) -> str:
    """Render ``df`` as a markdown table (header + rows), optionally only the first rows."""
    return rows_text(df, "markdown", max_rows=max_rows, max_chars=max_chars, index=index)


def rows_text(
    df: pd.DataFrame,
    fmt: TableFormat = "markdown",
    *,
    max_rows: int | None = None,
    max_chars: int = 60,
    index: bool = False,
) -> str:
    """Render ``df`` (or its first ``max_rows``) as markdown, aligned text or HTML.

    Markdown uses the compact cell style the solver prompts were measured with.
    """
    frame = df if max_rows is None else df.head(max_rows)
    cells: CellStyle = "compact" if fmt == "markdown" else "escaped"
    return render_table(
        frame, fmt, max_rows=None, max_cell_chars=max_chars, index=index, cells=cells
    )


def describe_table(
    df: pd.DataFrame,
    *,
    name: str = "df",
    head_rows: int = 8,
    max_chars: int = 40,
    quote: str = "'",
    full_table_tokens: int = 0,
    fmt: TableFormat = "markdown",
    view: TypedTable | None = None,
    notes: bool = True,
) -> str:
    """Describe a table for a code-writing prompt: size, columns with dtypes, rows.

    Args:
        df: The table.
        name: Its name in the code (``df`` for Python, ``t`` for SQL).
        head_rows: How many first rows to show.
        max_chars: Longer cells are cut.
        quote: Quote character for column names (``'`` for Python, ``"`` for SQL).
        full_table_tokens: Show every row instead when they fit in this many
            tokens (0: never), so the model sees how all the values are written.
        fmt: How the rows are written (markdown, string or html).
        view: The typed view ``df`` comes from (typed columns, row numbers): each
            added column says what it holds, companions are left out of the rows
            shown, and, with ``notes``, the view's notes follow the columns.
        notes: Add the view's notes (the main table's description only).
    """
    entries = []
    for c in df.columns:
        note = column_note(view, str(c)) if view is not None else ""
        entries.append(f"{quote}{c}{quote} ({dtype_name(df[c])}{', ' + note if note else ''})")
    parts = [
        f"`{name}` has {len(df)} rows and {len(df.columns)} columns.",
        f"Columns: {', '.join(entries)}",
    ]
    if view is not None:
        if notes:
            parts += table_notes(view, name, "sql" if quote == '"' else "python")
        df = df.drop(columns=[c for c in view.companions if c in df.columns])
    if full_table_tokens > 0 and len(df) > head_rows:
        whole = rows_text(df, fmt, max_chars=max_chars)
        if count_tokens(whole) <= full_table_tokens:
            parts.append(f"All rows:\n{whole}")
            return "\n".join(parts)
    if head_rows > 0 and len(df):
        shown = min(head_rows, len(df))
        label = "All rows" if shown == len(df) else f"First {shown} rows"
        parts.append(f"{label}:\n{rows_text(df, fmt, max_rows=shown, max_chars=max_chars)}")
    return "\n".join(parts)


def join_hints(tables: Mapping[str, pd.DataFrame], *, quote: str = "'") -> list[str]:
    """One line per other table naming the columns it shares with the first (join keys)."""
    names = list(tables)
    if len(names) < 2:
        return []
    main = [c for c in tables[names[0]].columns if not str(c).startswith(ROW_COLUMN)]
    lines = []
    for name in names[1:]:
        other = set(tables[name].columns)
        shared = [c for c in main if c in other]
        if shared:
            cols = ", ".join(f"{quote}{c}{quote}" for c in shared)
            lines.append(f"`{names[0]}` and `{name}` share columns (join on them): {cols}")
    return lines


def context_block(
    tables: dict[str, pd.DataFrame],
    extra: str = "",
    sub_table: pd.DataFrame | None = None,
    *,
    head_rows: int = 8,
    quote: str = "'",
    full_table_tokens: int = 0,
    fmt: TableFormat = "markdown",
    views: Mapping[str, TypedTable] | None = None,
) -> tuple[str, str]:
    """Return ``(tables text, extra text)`` for a solver prompt.

    The first table is described with ``head_rows`` rows (or all of them when
    they fit in ``full_table_tokens``), others with three;
    ``extra`` (schema, retrieved cells, clarifications) and a filtered
    ``sub_table`` (with its row ids) go in the second part. ``fmt`` is how
    rows are written. ``views`` (by the same names as ``tables``) are the typed
    views the tables come from, if any. With several tables, their shared
    column names follow (:func:`join_hints`).
    """
    names = list(tables)
    views = views or {}
    parts = [
        describe_table(
            tables[names[0]],
            name=names[0],
            head_rows=head_rows,
            quote=quote,
            full_table_tokens=full_table_tokens,
            fmt=fmt,
            view=views.get(names[0]),
        )
    ]
    parts += [
        describe_table(
            tables[n], name=n, head_rows=3, quote=quote, fmt=fmt, view=views.get(n), notes=False
        )
        for n in names[1:]
    ]
    parts += join_hints(tables, quote=quote)
    extra = extra.strip()
    if sub_table is not None and not sub_table.empty:
        rows = rows_text(sub_table, fmt, max_rows=20, max_chars=40, index=True)
        extra = f"{extra}\nRelevant rows:\n{rows}".strip()
    return "\n".join(parts), extra


def user_prompt(
    prompt: str,
    ctx: SolverContext,
    tables: dict[str, pd.DataFrame],
    *,
    head_rows: int = 8,
    quote: str = "'",
    full_table_tokens: int = 0,
    views: Mapping[str, TypedTable] | None = None,
) -> str:
    """Fill the solver prompt ``prompt`` with the tables, the extra context and the question.

    The tables and extra text come from :func:`context_block` (in the context's
    table format, with the tables' typed ``views`` if any); blank lines are squeezed.
    """
    table, extra = context_block(
        tables,
        ctx.extra_text(),
        ctx.sub_table,
        head_rows=head_rows,
        quote=quote,
        full_table_tokens=full_table_tokens,
        fmt=ctx.table_format,
        views=views,
    )
    text = load_prompt(prompt).format(table=table, extra=extra, question=ctx.question)
    return text.replace("\n\n", "\n")
