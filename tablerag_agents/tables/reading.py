"""Read one table file into a clean frame, in this process (the bounded worker's side).

:func:`~tablerag_agents.tables.loaders.load_table` runs :func:`read_file` in a
bounded worker (:mod:`tablerag_agents.tables.load_task`); call it directly only
on files you trust. Every failure is a
:class:`~tablerag_agents.errors.TableLoadError` naming the file: the readers'
own errors, and anything else a parser raises (``RecursionError`` from deeply
nested JSON, lxml's ``XMLSyntaxError`` from a malformed workbook...). Failed
allocations are re-raised as they are, so the worker reports its memory limit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from tablerag_agents.bounded.limits import is_memory_error
from tablerag_agents.errors import TableLoadError
from tablerag_agents.tables.cleaning import DEFAULT_MAX_CELL_CHARS, clean_table
from tablerag_agents.tables.db_readers import read_duckdb, read_parquet, read_sqlite
from tablerag_agents.tables.excel_reader import read_excel
from tablerag_agents.tables.header_detect import csv_group_header
from tablerag_agents.tables.limits import LoadLimits
from tablerag_agents.tables.text_readers import (
    check_not_binary,
    decode_text,
    read_csv_text,
    read_json_text,
    remove_nul_bytes,
)

#: File extension -> format name.
FORMATS: dict[str, str] = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".xlsx": "excel",
    ".xlsm": "excel",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".db": "sqlite",
    ".sqlite": "sqlite",
    ".sqlite3": "sqlite",
    ".duckdb": "duckdb",
}


def format_of(path: Path, fmt: str | None) -> str:
    """The format name of ``path`` (``fmt`` if given, else from the extension).

    Raises:
        TableLoadError: For an unknown format or extension.
    """
    if fmt is not None:
        if fmt not in set(FORMATS.values()):
            known = sorted(set(FORMATS.values()))
            raise TableLoadError(path, f"unknown format {fmt!r}; use one of {known}")
        return fmt
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise TableLoadError(
            path, f"unknown extension {suffix or '(none)'!r}; supported: {sorted(FORMATS)}"
        )
    return FORMATS[suffix]


def _read_raw(
    path: Path,
    fmt: str,
    *,
    table: str | None,
    sheet: str | int | None,
    block: int | None,
    encoding: str | None,
    notes: list[str],
    opts: dict[str, Any],
    limits: LoadLimits,
    extra: dict[str, Any],
) -> tuple[pd.DataFrame, str | None]:
    """Return the raw frame and the inner table/sheet name (``extra`` gets sheet metadata)."""
    if block is not None and fmt != "excel":
        raise TableLoadError(path, f"block={block} applies to spreadsheets only, not {fmt}")
    if fmt == "sqlite":
        return read_sqlite(path, table, limits)
    if fmt == "duckdb":
        return read_duckdb(path, table, limits)
    if fmt == "excel":
        df, name, meta = read_excel(path, sheet, block)
        extra.update(meta)
        return df, name
    if fmt == "parquet":
        return read_parquet(path, limits), None
    raw = path.read_bytes()
    if not raw.strip():
        raise TableLoadError(path, "file is empty")
    check_not_binary(raw, path)
    raw = remove_nul_bytes(raw, notes)
    text = decode_text(raw, path, encoding, notes)
    del raw
    if fmt in ("json", "jsonl"):
        return read_json_text(text, path, lines=True if fmt == "jsonl" else None), None
    if fmt == "tsv":
        opts.setdefault("sep", "\t")
    df, header = read_csv_text(text, path, notes, limits=limits, **opts)
    grouped = csv_group_header(header, df.head(50).astype(object).to_numpy().tolist())
    if grouped is not None:
        extra["header_rows"] = 2
        body = df.iloc[1:].reset_index(drop=True)
        return body.apply(_as_numbers).set_axis(grouped, axis=1), None
    return df.set_axis(header, axis=1), None


def _as_numbers(column: pd.Series) -> pd.Series:
    """The column as numbers when every value parses (the second header row made it text)."""
    if not pd.api.types.is_string_dtype(column) and column.dtype != object:
        return column
    try:
        return pd.to_numeric(column)
    except (ValueError, TypeError):
        return column


def read_file(
    path: Path,
    *,
    format: str | None = None,
    table: str | None = None,
    sheet: str | int | None = None,
    block: int | None = None,
    encoding: str | None = None,
    max_cell_chars: int | None = DEFAULT_MAX_CELL_CHARS,
    iso_dates: bool = True,
    limits: LoadLimits | None = None,
    opts: dict[str, Any] | None = None,
) -> tuple[pd.DataFrame, list[str], dict[str, Any]]:
    """Read and clean one table file (see :func:`~tablerag_agents.tables.loaders.load_table`).

    Returns:
        The clean frame, the repair notes, and the metadata (``source``,
        ``format``, and ``table`` or ``sheet`` when the file holds several;
        ``block``/``blocks``, ``title``, ``header_rows`` for a spreadsheet
        table found by :mod:`~tablerag_agents.tables.header_detect`).

    Raises:
        TableLoadError: For any unreadable, unusable or too large file.
    """
    limits = limits or LoadLimits()
    if not path.exists():
        raise TableLoadError(path, "no such file")
    if path.is_dir():
        raise TableLoadError(path, "is a directory, not a file (use load_tables for folders)")
    fmt = format_of(path, format)
    notes: list[str] = []
    extra: dict[str, Any] = {}
    try:
        raw, inner = _read_raw(
            path,
            fmt,
            table=table,
            sheet=sheet,
            block=block,
            encoding=encoding,
            notes=notes,
            opts=dict(opts or {}),
            limits=limits,
            extra=extra,
        )
        limits.check_shape(path, *raw.shape)
        df, clean_notes = clean_table(raw, path, max_cell_chars=max_cell_chars, iso_dates=iso_dates)
    except TableLoadError:
        raise
    except PermissionError as exc:
        raise TableLoadError(path, f"permission denied: {exc}") from exc
    except RecursionError as exc:
        raise TableLoadError(
            path, "nested too deeply to parse (past Python's recursion limit)"
        ) from exc
    except Exception as exc:
        if is_memory_error(exc):
            raise
        text = str(exc).strip()
        reason = f"{type(exc).__name__}: {text.splitlines()[0][:300]}" if text else repr(exc)
        raise TableLoadError(path, f"cannot read the {fmt} file ({reason})") from exc
    metadata: dict[str, Any] = {"source": str(path), "format": fmt}
    if inner is not None:
        metadata["sheet" if fmt == "excel" else "table"] = inner
    metadata.update(extra)
    return df, notes + clean_notes, metadata
