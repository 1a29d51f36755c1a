"""Load tables from files, folders or DataFrames into clean :class:`Table` objects.

Supported: CSV/TSV (delimiter sniffed), ``.xlsx``, Parquet, JSON (records,
``{columns, data}``, OTT-QA table dicts) and JSON lines, SQLite and DuckDB files,
and in-memory DataFrames.

Bad input gets a :class:`~tablerag_agents.errors.TableLoadError` naming the
file, or a repaired table plus a :class:`~tablerag_agents.tables.cleaning.TableLoadWarning`:

- column names: unique, non-empty, single-line strings of at most 100 chars
  (see :func:`~tablerag_agents.tables.cleaning.normalize_column_names`);
- cells: surrounding whitespace stripped, types inferred by pandas, strings
  such as ``"1,234"`` kept as-is; text columns holding only ISO dates
  (``YYYY-MM-DD``, optionally with a time) become datetimes; cells longer than ``max_cell_chars``
  (default 100,000 chars, ``None`` = no limit) are truncated so one huge cell
  cannot blow up prompts and indexes; nested JSON values become JSON strings;
- a table with no rows or no columns is an error.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from tablerag_agents.errors import TableLoadError
from tablerag_agents.tables.cleaning import (
    DEFAULT_MAX_CELL_CHARS,
    normalize_column_names,
    parse_iso_dates,
    strip_string_cells,
    truncate_long_cells,
    warn,
)
from tablerag_agents.tables.db_readers import read_duckdb, read_excel, read_parquet, read_sqlite
from tablerag_agents.tables.model import Table
from tablerag_agents.tables.ottqa import ottqa_table
from tablerag_agents.tables.text_readers import (
    check_not_binary,
    decode_text,
    read_csv_text,
    read_json_text,
)

logger = logging.getLogger(__name__)

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


def _nested_to_json(df: pd.DataFrame) -> int:
    """Turn dict/list cells into JSON strings in place; return how many changed."""
    changed = 0
    for col in df.columns:
        series = df[col]
        if not pd.api.types.is_object_dtype(series):
            continue
        nested = series.map(lambda v: isinstance(v, dict | list | tuple | set))
        if nested.any():
            changed += int(nested.sum())
            df.loc[nested, col] = series[nested].map(
                lambda v: json.dumps(list(v) if isinstance(v, set) else v, default=str)
            )
    return changed


def clean_frame(
    df: pd.DataFrame,
    source: str | Path,
    *,
    max_cell_chars: int | None = DEFAULT_MAX_CELL_CHARS,
    notes: list[str] | None = None,
    quiet: bool = False,
    iso_dates: bool = True,
) -> pd.DataFrame:
    """Return a cleaned copy of ``df``: fixed names, stripped/truncated cells.

    Args:
        df: Raw frame (labels may be anything, duplicated, MultiIndex...).
        source: Named in errors and warnings.
        max_cell_chars: Longest string cell kept (``None``: no limit).
        notes: Repairs already made by a reader, reported with the new ones.
        quiet: Log repairs at INFO instead of emitting warnings (dataset loaders).
        iso_dates: Convert text columns holding only ISO dates to datetimes.

    Raises:
        TableLoadError: If the table has no columns or no rows.
    """
    notes = list(notes or [])
    if df.shape[1] == 0:
        raise TableLoadError(source, "table has no columns")
    if len(df) == 0:
        raise TableLoadError(source, "table has no rows")
    df = df.copy()
    if isinstance(df.index, pd.MultiIndex) or any(n is not None for n in df.index.names):
        df = df.reset_index()
    if isinstance(df.columns, pd.MultiIndex):
        labels: list[object] = [
            " / ".join(str(p) for p in parts if str(p) and not str(p).startswith("Unnamed"))
            for parts in df.columns
        ]
    else:
        labels = list(df.columns)
    names, name_notes = normalize_column_names(labels)
    notes.extend(name_notes)
    df.columns = pd.Index(names, dtype=object)
    df = df.reset_index(drop=True)
    nested = _nested_to_json(df)
    if nested:
        notes.append(f"{nested} nested JSON value(s) stored as JSON strings")
    strip_string_cells(df)
    notes.extend(truncate_long_cells(df, max_cell_chars))
    if iso_dates:
        dated = parse_iso_dates(df)
        if dated:
            logger.debug("%s: parsed ISO dates in %s", source, dated)
    for note in notes:
        if quiet:
            logger.info("%s: %s", source, note)
        else:
            warn(f"{source}: {note}")
    return df


def _format_of(path: Path, fmt: str | None) -> str:
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


def _read_path(
    path: Path,
    fmt: str,
    *,
    table: str | None,
    sheet: str | int | None,
    encoding: str | None,
    notes: list[str],
    opts: dict[str, Any],
) -> tuple[pd.DataFrame | dict, str | None]:
    """Return the raw frame (or OTT-QA dict) and the inner table/sheet name."""
    if fmt == "sqlite":
        return read_sqlite(path, table)
    if fmt == "duckdb":
        return read_duckdb(path, table)
    if fmt == "excel":
        return read_excel(path, sheet)
    if fmt == "parquet":
        return read_parquet(path), None
    raw = path.read_bytes()
    if not raw.strip():
        raise TableLoadError(path, "file is empty")
    check_not_binary(raw, path)
    text = decode_text(raw, path, encoding, notes)
    if fmt in ("json", "jsonl"):
        return read_json_text(text, path, lines=True if fmt == "jsonl" else None), None
    if fmt == "tsv":
        opts.setdefault("sep", "\t")
    df, header = read_csv_text(text, path, notes, **opts)
    return df.set_axis(header, axis=1), None


def load_table(
    source: str | Path | pd.DataFrame,
    *,
    id: str | None = None,
    caption: str | None = None,
    table: str | None = None,
    sheet: str | int | None = None,
    format: str | None = None,
    encoding: str | None = None,
    max_cell_chars: int | None = DEFAULT_MAX_CELL_CHARS,
    quiet: bool = False,
    iso_dates: bool = True,
    **opts: Any,
) -> Table:
    """Load one table from a file or a DataFrame.

    Args:
        source: A file path or an in-memory DataFrame (copied, never modified).
        id: Table id (default: the file stem, or ``"dataframe"``).
        caption: Human title (default: the file stem, or ``""`` for a DataFrame).
        table: Table name inside a SQLite/DuckDB file (optional if it has one).
        sheet: Sheet name or index inside an ``.xlsx`` (optional if it has one).
        format: Force a format (``csv, tsv, excel, parquet, json, jsonl, sqlite,
            duckdb``) instead of guessing from the extension.
        encoding: Text encoding (default: UTF-8, else detected with a warning).
        max_cell_chars: Longest string cell kept; longer ones are truncated
            with a warning (``None``: keep everything).
        quiet: Log repairs instead of warning (for bulk dataset loading).
        iso_dates: Convert text columns holding only ISO dates to datetimes.
        **opts: Passed to :func:`pandas.read_csv` for CSV/TSV (``sep``,
            ``escapechar``, ``nrows``...).

    Returns:
        The table; ``metadata["source"]`` is the path (and ``metadata["table"]``
        or ``["sheet"]`` the inner name when there is one).

    Raises:
        TableLoadError: For a missing file, a folder, an unknown extension, an
            empty/binary/unparsable file, or a table without rows or columns.
    """
    clean: dict[str, Any] = {
        "max_cell_chars": max_cell_chars,
        "quiet": quiet,
        "iso_dates": iso_dates,
    }
    if isinstance(source, pd.DataFrame):
        df = clean_frame(source, id or "dataframe", **clean)
        return Table(id=id or "dataframe", df=df, caption=caption or "", metadata={})
    if not isinstance(source, str | Path):
        kind = type(source).__name__
        raise TableLoadError(repr(source)[:80], f"expected a path or a DataFrame, got {kind}")
    path = Path(source)
    if not path.exists():
        raise TableLoadError(path, "no such file")
    if path.is_dir():
        raise TableLoadError(path, "is a directory, not a file (use load_tables for folders)")
    fmt = _format_of(path, format)
    notes: list[str] = []
    try:
        raw, inner = _read_path(
            path, fmt, table=table, sheet=sheet, encoding=encoding, notes=notes, opts=dict(opts)
        )
    except PermissionError as exc:
        raise TableLoadError(path, f"permission denied: {exc}") from exc
    except (OSError, MemoryError) as exc:
        raise TableLoadError(path, f"cannot read: {exc}") from exc
    if isinstance(raw, dict):  # an OTT-QA table dict in a .json file
        t = ottqa_table(raw, table_id=id or path.stem)
        t.df = clean_frame(t.df, path, **clean)
        t.metadata["source"] = str(path)
        return t
    df = clean_frame(raw, path, notes=notes, **clean)
    metadata: dict[str, Any] = {"source": str(path), "format": fmt}
    if inner is not None:
        metadata["sheet" if fmt == "excel" else "table"] = inner
    stem = path.stem
    title = stem if caption is None else caption
    return Table(id=id or stem, df=df, caption=title, metadata=metadata)


def _walk(paths_or_folder: str | Path | Iterable[str | Path]) -> Iterator[tuple[Path, str]]:
    """Yield ``(file, id)``: ids are relative paths without suffix inside a folder."""
    if isinstance(paths_or_folder, str | Path):
        root = Path(paths_or_folder)
        if not root.exists():
            raise TableLoadError(root, "no such file or folder")
        if root.is_dir():
            for p in sorted(root.rglob("*")):
                if p.is_file() and p.suffix.lower() in FORMATS:
                    yield p, p.relative_to(root).with_suffix("").as_posix()
            return
        yield root, root.stem
        return
    seen: dict[str, int] = {}
    for item in paths_or_folder:
        p = Path(item)
        stem = p.stem
        seen[stem] = seen.get(stem, 0) + 1
        yield p, stem if seen[stem] == 1 else f"{stem}_{seen[stem]}"


def load_tables(
    paths_or_folder: str | Path | Iterable[str | Path],
    *,
    on_error: str = "warn",
    **kwargs: Any,
) -> Iterator[Table]:
    """Load every table file in a folder (recursively, known extensions) or a list of paths.

    Args:
        paths_or_folder: A folder, one file, or an iterable of files.
        on_error: ``"warn"`` skips an unreadable file with a warning,
            ``"raise"`` re-raises its :class:`TableLoadError`.
        **kwargs: Passed to :func:`load_table` (not ``id``).

    Yields:
        Tables in path order; ids are paths relative to the folder without the
        extension (``"200-csv/0"``), or file stems for a list.
    """
    if on_error not in ("warn", "raise"):
        raise ValueError(f"on_error must be 'warn' or 'raise', not {on_error!r}")
    skipped = 0
    for path, table_id in _walk(paths_or_folder):
        try:
            yield load_table(path, id=table_id, **kwargs)
        except TableLoadError as exc:
            if on_error == "raise":
                raise
            skipped += 1
            warn(f"skipped {path}: {exc.reason}")
    if skipped:
        logger.info("skipped %d unreadable table file(s)", skipped)
