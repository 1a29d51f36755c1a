"""Render a table or sub-table as text for prompts (markdown, string, html, csv)."""

from __future__ import annotations

import html
from typing import Literal

import pandas as pd

from tablerag_agents.tables.values import format_value

TableFormat = Literal["markdown", "string", "html", "csv"]
FORMATS: tuple[str, ...] = ("markdown", "string", "html", "csv")
#: How cells are written: ``"escaped"`` keeps every character (markdown escapes
#: ``|``, ``\\`` and newlines); ``"compact"`` is the solver prompts' layout
#: (integer floats as ``3``; in markdown a ``|`` becomes ``/``, a newline a
#: space, and header names are left as they are, so code can copy them).
CellStyle = Literal["escaped", "compact"]
CELL_STYLES: tuple[str, ...] = ("escaped", "compact")


def _md_cell(text: str) -> str:
    """Escape a cell for a GitHub-style markdown table (pipes, newlines)."""
    text = text.replace("\\", "\\\\").replace("|", "\\|")
    return text.replace("\r\n", "<br>").replace("\n", "<br>").replace("\r", "<br>")


def _flat_cell(text: str) -> str:
    """Keep a cell on one markdown table line without escapes (``|`` -> ``/``)."""
    return text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ").replace("|", "/")


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _markdown(frame: pd.DataFrame, style: CellStyle) -> str:
    escape = _md_cell if style == "escaped" else _flat_cell
    header = [_md_cell(str(c)) if style == "escaped" else str(c) for c in frame.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in frame.itertuples(index=False, name=None):
        lines.append("| " + " | ".join(escape(v) for v in row) + " |")
    return "\n".join(lines)


def _html(frame: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = [
        "<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in row) + "</tr>"
        for row in frame.itertuples(index=False, name=None)
    ]
    return (
        "<table>\n<thead><tr>"
        + head
        + "</tr></thead>\n<tbody>\n"
        + "\n".join(rows)
        + ("\n</tbody>\n</table>")
    )


def render_table(
    df: pd.DataFrame,
    fmt: TableFormat = "markdown",
    *,
    max_rows: int | None = 20,
    max_cols: int | None = None,
    max_cell_chars: int | None = 100,
    index: bool = False,
    cells: CellStyle = "escaped",
) -> str:
    """Render the first rows of ``df`` as text, noting what was left out.

    Cells are formatted with :func:`~tablerag_agents.tables.values.format_value`
    (missing values are empty) and cut to ``max_cell_chars``. When rows or
    columns are dropped, a last line says how many (``[... 980 more rows]``).

    Args:
        df: The table or sub-table.
        fmt: ``"markdown"`` (pipes and newlines escaped), ``"string"``
            (aligned plain text), ``"html"`` (escaped) or ``"csv"``.
        max_rows: Rows shown (``None``: all).
        max_cols: Columns shown (``None``: all).
        max_cell_chars: Longest cell text (``None``: no cut).
        index: Include the row index as a first column (named ``row``).
        cells: ``"escaped"`` or ``"compact"`` (see :data:`CellStyle`).

    Raises:
        ValueError: For an unknown format or style, or a negative limit.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown table format {fmt!r}; use one of {list(FORMATS)}")
    if cells not in CELL_STYLES:
        raise ValueError(f"unknown cell style {cells!r}; use one of {list(CELL_STYLES)}")
    if (max_rows is not None and max_rows < 0) or (max_cols is not None and max_cols < 0):
        raise ValueError("max_rows and max_cols must be >= 0")
    n_rows, n_cols = df.shape
    part = df.iloc[: n_rows if max_rows is None else max_rows]
    part = part.iloc[:, : n_cols if max_cols is None else max_cols]
    int_floats = cells == "compact"
    names = (["row"] if index else []) + [str(c) for c in part.columns]
    columns = ([list(part.index)] if index else []) + [
        list(part.iloc[:, i]) for i in range(part.shape[1])
    ]
    data = [[format_value(v, max_cell_chars, int_floats=int_floats) for v in c] for c in columns]
    frame = pd.DataFrame(dict(enumerate(data)), index=range(len(part)), dtype=object)
    frame.columns = pd.Index(names, dtype=object)
    if fmt == "markdown":
        text = _markdown(frame, cells)
    elif fmt == "html":
        text = _html(frame)
    elif fmt == "csv":
        text = frame.to_csv(index=False).rstrip("\n")
    else:
        text = frame.to_string(index=False) if len(frame) else " ".join(frame.columns)
    more = []
    if len(part) < n_rows:
        more.append(_plural(n_rows - len(part), "more row"))
    hidden_cols = n_cols - part.shape[1]
    if hidden_cols > 0:
        more.append(_plural(hidden_cols, "more column"))
    if more:
        text += f"\n[... {', '.join(more)}]"
    return text
