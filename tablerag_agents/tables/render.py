"""Render a table or sub-table as text for prompts (markdown, string, html, csv)."""

from __future__ import annotations

import html
from typing import Literal

import pandas as pd

from tablerag_agents.tables.values import format_value

TableFormat = Literal["markdown", "string", "html", "csv"]
FORMATS: tuple[str, ...] = ("markdown", "string", "html", "csv")


def _md_cell(text: str) -> str:
    """Escape a cell for a GitHub-style markdown table (pipes, newlines)."""
    text = text.replace("\\", "\\\\").replace("|", "\\|")
    return text.replace("\r\n", "<br>").replace("\n", "<br>").replace("\r", "<br>")


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _markdown(frame: pd.DataFrame) -> str:
    header = [_md_cell(str(c)) for c in frame.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in frame.itertuples(index=False, name=None):
        lines.append("| " + " | ".join(_md_cell(v) for v in row) + " |")
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

    Raises:
        ValueError: For an unknown format or a negative limit.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown table format {fmt!r}; use one of {list(FORMATS)}")
    if (max_rows is not None and max_rows < 0) or (max_cols is not None and max_cols < 0):
        raise ValueError("max_rows and max_cols must be >= 0")
    n_rows, n_cols = df.shape
    part = df.iloc[: n_rows if max_rows is None else max_rows]
    part = part.iloc[:, : n_cols if max_cols is None else max_cols]
    if index:
        part = part.reset_index(names="row")  # type: ignore[call-overload]
    names = [str(c) for c in part.columns]
    data = [[format_value(v, max_cell_chars) for v in part.iloc[:, i]] for i in range(len(names))]
    cells = pd.DataFrame(dict(enumerate(data)), index=range(len(part)), dtype=object)
    cells.columns = pd.Index(names, dtype=object)
    if fmt == "markdown":
        text = _markdown(cells)
    elif fmt == "html":
        text = _html(cells)
    elif fmt == "csv":
        text = cells.to_csv(index=False).rstrip("\n")
    else:
        text = cells.to_string(index=False) if len(cells) else " ".join(cells.columns)
    more = []
    if len(part) < n_rows:
        more.append(_plural(n_rows - len(part), "more row"))
    hidden_cols = n_cols - (part.shape[1] - (1 if index else 0))
    if hidden_cols > 0:
        more.append(_plural(hidden_cols, "more column"))
    if more:
        text += f"\n[... {', '.join(more)}]"
    return text
