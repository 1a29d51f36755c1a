"""PieTa sub-table selection (Lee et al.): windows, cell picks, union, repeat to a fixed point.

The current table is cut into w x w windows (stride 1 by default, the last
window of a row or column flush with the edge, as in the paper's DivideTable);
the model picks the cells each window needs; the union of the picks gives the
rows and columns of the next table. This repeats on the smaller table until
nothing changes or ``max_rounds`` is reached. Window prompts of one round go
to the model as one ``batch`` (the local server decodes several at once and
reuses the shared instruction prefix). ``max_windows`` caps the model calls of
a round (see :func:`plan_grid`), ``max_cells`` the table that enters the windows.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

import pandas as pd
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage

from tablerag_agents.filtering.base import (
    Meter,
    SubTable,
    check_table,
    column_names,
    display_name,
)
from tablerag_agents.prompts import load_prompt
from tablerag_agents.solve.preview import markdown_rows

logger = logging.getLogger(__name__)

METHOD = "pieta"
DEFAULT_MAX_WINDOWS = 16
"""Most windows (model calls) per round by default: about a minute of the embedded model
per round on 2 cores, so at most ``16 * max_rounds`` calls per question."""
DEFAULT_MAX_CELLS = 2000
"""A table with more cells is cut to this many before its windows (see :func:`pieta_filter`)."""
Cell = tuple[int, str]
"""A picked cell: (row position in the input table, column name)."""


def window_starts(n: int, window: int, stride: int) -> list[int]:
    """Start offsets of the windows along one axis of length ``n`` (last one flush)."""
    if n <= window:
        return [0]
    return sorted({min(i, n - window) for i in range(0, n, stride)})


@dataclass(frozen=True)
class WindowGrid:
    """How one round cuts the table: windows of ``height`` x ``width`` cells, ``step`` apart."""

    height: int
    width: int
    row_step: int
    col_step: int

    def count(self, n_rows: int, n_cols: int) -> int:
        """Windows this grid cuts from an ``n_rows`` x ``n_cols`` table."""
        rows = window_starts(n_rows, self.height, self.row_step)
        return len(rows) * len(window_starts(n_cols, self.width, self.col_step))


def divide(
    rows: Sequence[int], columns: Sequence[str], grid: WindowGrid
) -> list[tuple[list[int], list[str]]]:
    """The windows (row positions, column names) of a table, in raster order."""
    return [
        (list(rows[i : i + grid.height]), list(columns[j : j + grid.width]))
        for i, j in product(
            window_starts(len(rows), grid.height, grid.row_step),
            window_starts(len(columns), grid.width, grid.col_step),
        )
    ]


def plan_grid(
    n_rows: int, n_cols: int, window: int, stride: int, max_windows: int | None
) -> WindowGrid:
    """The grid of one round: at most ``max_windows`` windows, every cell in one of them.

    Within budget, the paper's ``window`` x ``window`` windows at ``stride``.
    Over it, the stride grows first (up to ``window``: no overlap left); if
    that still cuts too many windows, the windows grow, taller first and wider
    only when the columns alone need more than ``max_windows`` windows. Larger
    windows mean longer prompts, never an unseen cell or a call over budget.
    """
    square = WindowGrid(window, window, stride, stride)
    if max_windows is None:
        return square
    for step in range(stride, max(stride, window) + 1):
        grid = WindowGrid(window, window, step, step)
        if grid.count(n_rows, n_cols) <= max_windows:
            return grid
    col_groups = min(-(-n_cols // window), max_windows)
    width = max(window, -(-n_cols // col_groups))
    col_groups = -(-n_cols // width)
    height = max(window, -(-n_rows // (max_windows // col_groups)))
    return WindowGrid(height, width, height, width)


def _ints(values: Any) -> list[int]:
    out = []
    for v in values if isinstance(values, list) else [values]:
        if isinstance(v, bool):
            continue
        if isinstance(v, int | float) and float(v).is_integer():
            out.append(int(v))
        elif isinstance(v, str) and re.fullmatch(r"\s*\d+\s*", v):
            out.append(int(v))
    return out


def _json_objects(text: str) -> list[dict[str, Any]]:
    found = []
    decoder = json.JSONDecoder()
    for m in re.finditer(r"\{", text):
        try:
            obj, _ = decoder.raw_decode(text[m.start() :])
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            found.append(obj)
    return found


def _lists_by_regex(text: str) -> dict[str, Any]:
    """``rows: [..]`` / ``columns: [..]`` written loosely (single quotes, no braces)."""
    out: dict[str, Any] = {}
    for key in ("rows", "columns"):
        m = re.search(rf"{key}\W*\[([^\]]*)\]", text, re.I)
        if m:
            items = re.findall(r"\"([^\"]*)\"|'([^']*)'|(-?\d+)", m.group(1))
            out[key] = [a or b or int(c) for a, b, c in items]
    return out


def parse_picks(text: str, rows: Sequence[int], columns: Sequence[str]) -> set[Cell] | None:
    """The cells of one window a reply picks; None when the reply has no readable pick.

    Accepts ``{"rows": [...], "columns": [...]}`` (a rectangle) or
    ``{"cells": [[row, column], ...]}``; rows are the shown row numbers,
    columns exact or case-insensitive names. Picks outside the window are ignored.
    """
    by_name = {display_name(c).lower(): c for c in columns}
    in_rows = set(rows)

    def col(value: Any) -> str | None:
        return by_name.get(display_name(value).lower()) if isinstance(value, str) else None

    objs = _json_objects(text) or ([loose] if (loose := _lists_by_regex(text)) else [])
    if not objs:
        return None
    picks: set[Cell] = set()
    for obj in objs:
        if isinstance(obj.get("cells"), list):
            for item in obj["cells"]:
                if isinstance(item, list | tuple) and len(item) == 2:
                    r, c = _ints(item[0]), col(item[1])
                    if r and r[0] in in_rows and c is not None:
                        picks.add((r[0], c))
        cols = [c for c in (col(v) for v in _as_list(obj.get("columns"))) if c is not None]
        picked_rows = [r for r in _ints(obj.get("rows", [])) if r in in_rows]
        picks.update(product(picked_rows, cols))
    return picks


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [] if value is None else [value]


def _prompt(question: str, df: pd.DataFrame, rows: list[int], cols: list[str]) -> str:
    names = column_names(df)
    piece = df.iloc[rows, [names.index(c) for c in cols]]
    piece = piece.set_axis(rows, axis=0).set_axis([display_name(c) for c in cols], axis=1)
    return load_prompt("pieta").format(
        question=question, window=markdown_rows(piece, max_chars=40, index=True)
    )


def _rows_within(df: pd.DataFrame, max_cells: int) -> int:
    """Rows of ``df`` that fit in ``max_cells`` cells (over at most ``max_cells`` columns)."""
    return max(1, max_cells // max(1, min(len(column_names(df)), max_cells)))


def cuts_rows(df: pd.DataFrame, max_cells: int = DEFAULT_MAX_CELLS) -> bool:
    """True if :func:`pieta_filter` keeps only some rows of ``df`` (chosen by ``embeddings``)."""
    return len(df) > _rows_within(df, max_cells)


def _cap(
    question: str, df: pd.DataFrame, max_cells: int, embeddings: Embeddings | None
) -> tuple[list[int], list[str]]:
    """Rows and columns that go through windows: at most ``max_cells`` cells."""
    cols = column_names(df)[: max(1, max_cells)]
    keep = _rows_within(df, max_cells)
    if len(df) <= keep:
        return list(range(len(df))), cols
    if embeddings is not None:
        from tablerag_agents.filtering.semantic import semantic_filter

        pre = semantic_filter(question, df, embeddings, top_rows=keep, top_columns=len(cols))
        if not pre.fallback:
            return pre.rows, cols
    return list(range(keep)), cols


def pieta_filter(
    question: str,
    df: pd.DataFrame,
    model: BaseChatModel,
    *,
    window: int = 3,
    stride: int = 1,
    max_rounds: int = 3,
    max_cells: int = DEFAULT_MAX_CELLS,
    max_windows: int | None = DEFAULT_MAX_WINDOWS,
    embeddings: Embeddings | None = None,
    max_concurrency: int = 4,
    max_output_tokens: int | None = 80,
) -> SubTable:
    """Select a sub-table by PieTa: per-window cell picks, unioned, repeated to a fixed point.

    Args:
        question: The question.
        df: The table (not empty).
        model: Chat model picking cells in each window.
        window: Window size w (w x w cells).
        stride: Window step along rows and columns.
        max_rounds: Most divide/pick/union rounds.
        max_cells: A longer table is first cut to this many cells: the rows
            most similar to the question when ``embeddings`` is given, else the first rows.
        max_windows: Most windows (model calls) of one round, so at most
            ``max_windows * max_rounds`` per question: the stride grows up to
            ``window`` (no overlap), then the windows grow (see :func:`plan_grid`).
            None: always ``window`` x ``window`` at ``stride``, as in the paper
            (a 20 x 6 table is 72 windows per round at stride 1).
        embeddings: Optional embeddings for that pre-selection.
        max_concurrency: Window prompts sent at once (the local server has 4 slots).
        max_output_tokens: Cap on each reply (bound as ``max_tokens``; None: the model's).

    Raises:
        ValueError: On an empty table or a non-positive window, stride or round count.
    """
    check_table(df)
    if min(window, stride, max_rounds, max_cells) < 1 or (
        max_windows is not None and max_windows < 1
    ):
        raise ValueError("window, stride, max_rounds, max_cells and max_windows must be >= 1")
    meter = Meter()
    rows, cols = _cap(question, df, max_cells, embeddings)
    capped = len(rows) < len(df) or len(cols) < df.shape[1]
    chat: Any = model if max_output_tokens is None else model.bind(max_tokens=max_output_tokens)
    history: list[dict[str, Any]] = []
    detail: dict[str, Any] = {"capped": capped, "rounds": history, "fixed_point": False}
    for _ in range(max_rounds):
        grid = plan_grid(len(rows), len(cols), window, stride, max_windows)
        windows = divide(rows, cols, grid)
        prompts = [[HumanMessage(_prompt(question, df, r, c))] for r, c in windows]
        replies = chat.batch(
            prompts, config={"max_concurrency": max_concurrency}, return_exceptions=True
        )
        picks: set[Cell] = set()
        unreadable = 0
        for (w_rows, w_cols), reply in zip(windows, replies, strict=True):
            message = reply if isinstance(reply, AIMessage) else None
            meter.add(message)
            got = None if message is None else parse_picks(str(message.content), w_rows, w_cols)
            unreadable += got is None
            picks |= got or set()
        new_rows = sorted({r for r, _ in picks})
        picked_cols = {c for _, c in picks}
        new_cols = [c for c in cols if c in picked_cols]
        history.append(
            {
                "windows": len(windows),
                "window": [grid.height, grid.width],
                "stride": grid.row_step,
                "unreadable": unreadable,
                "cells": len(new_rows) * len(new_cols),
            }
        )
        if not picks:
            if len(history) == 1:
                reason = "no cell was picked" + (
                    f" ({unreadable} unreadable replies)" if unreadable else ""
                )
                return SubTable.whole(df, METHOD, reason, detail=detail, **meter.fields())
            detail["stopped"] = "a later round picked nothing; kept the previous round"
            break
        if (new_rows, new_cols) == (rows, cols):
            detail["fixed_point"] = True
            break
        rows, cols = new_rows, new_cols
    return SubTable.select(df, rows, cols, METHOD, detail=detail, **meter.fields())
