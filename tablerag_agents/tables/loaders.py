"""Load tables from files, folders or DataFrames into clean :class:`Table` objects.

Supported: CSV/TSV (delimiter sniffed), ``.xlsx``, Parquet, JSON (records,
``{columns, data}``, ``{column: [values]}``) and JSON lines, SQLite and DuckDB
files, and in-memory DataFrames. OTT-QA table dicts are a dataset format: read
them with :func:`~tablerag_agents.tables.ottqa.load_ottqa_corpus`.

Files are untrusted: each is read in a bounded worker process
(:mod:`tablerag_agents.bounded`) under the memory, CPU-time and wall-clock
limits of :class:`~tablerag_agents.tables.limits.LoadLimits`, and comes back as
Arrow; the host process never parses the file itself. Going past a limit (or
past ``max_cells``/``max_columns``) is a
:class:`~tablerag_agents.errors.TableLimitError` naming the limit and its value.

Bad input gets a :class:`~tablerag_agents.errors.TableLoadError` naming the
file, or a repaired table plus a :class:`~tablerag_agents.tables.cleaning.TableLoadWarning`:

- column names: unique, non-empty, single-line strings of at most 100 chars
  (see :func:`~tablerag_agents.tables.cleaning.normalize_column_names`);
- cells: surrounding whitespace stripped, types inferred by pandas, strings
  such as ``"1,234"`` kept as-is; text columns holding only ISO dates
  (``YYYY-MM-DD``, optionally with a time) become datetimes; cells longer than ``max_cell_chars``
  (default 100,000 chars, ``None`` = no limit) are truncated so one huge cell
  cannot blow up prompts and indexes; nested JSON values become JSON strings;
- NUL bytes in a text file past its first 64 KB (where they mean binary) are removed;
- a table with no rows or no columns is an error;
- layouts people make (:mod:`~tablerag_agents.tables.header_detect`): in a
  spreadsheet, title rows (the caption), two-row or merged headers (flattened
  to ``"Group / Column"``), spacer columns and several stacked tables
  (``block=N``; :func:`load_tables` yields each); in a CSV, a group row above
  the column row.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from tablerag_agents.bounded.frames import decode_frame
from tablerag_agents.bounded.pool import default_pool
from tablerag_agents.errors import TableLimitError, TableLoadError, WorkerError, WorkerLimitError
from tablerag_agents.tables.cleaning import (
    DEFAULT_MAX_CELL_CHARS,
    clean_table,
    report_notes,
    warn,
)
from tablerag_agents.tables.limits import LoadLimits
from tablerag_agents.tables.model import Table
from tablerag_agents.tables.reading import FORMATS
from tablerag_agents.tables.source import SourceSettings
from tablerag_agents.tables.source_tables import (
    is_database_url,
    load_database_table,
    load_file_out_of_core,
)

logger = logging.getLogger(__name__)

__all__ = ["FORMATS", "clean_frame", "load_table", "load_tables"]

_LOAD_TASK = "tablerag_agents.tables.load_task"


def clean_frame(
    df: pd.DataFrame,
    source: str | Path,
    *,
    max_cell_chars: int | None = DEFAULT_MAX_CELL_CHARS,
    notes: list[str] | None = None,
    quiet: bool = False,
    iso_dates: bool = True,
) -> pd.DataFrame:
    """Return a cleaned copy of ``df`` (see :func:`~tablerag_agents.tables.cleaning.clean_table`).

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
    clean, new_notes = clean_table(df, source, max_cell_chars=max_cell_chars, iso_dates=iso_dates)
    report_notes(source, [*(notes or []), *new_notes], quiet=quiet)
    return clean


def _worker_error(path: Path, reply: dict[str, Any]) -> TableLoadError:
    """The host-side error for a load that failed in the worker."""
    fields = reply.get("fields") or {}
    if "limit" in fields and "value" in fields:
        return TableLimitError(path, fields["limit"], fields["value"], fields.get("detail", ""))
    if reply.get("error_type") == "TableLoadError" and "reason" in fields:
        return TableLoadError(path, fields["reason"])
    return TableLoadError(path, f"{reply.get('error_type')}: {reply.get('error')}")


def _read_bounded(path: Path, args: dict[str, Any], limits: LoadLimits) -> tuple[Table, list[str]]:
    """Read ``path`` in a bounded worker; returns the table (id and caption unset) and notes."""
    try:
        reply, blob = default_pool().call(_LOAD_TASK, args, limits.worker())
    except WorkerLimitError as exc:
        raise TableLimitError(path, exc.limit, exc.value, exc.detail) from None
    except WorkerError as exc:
        raise TableLoadError(path, f"the load worker failed: {exc}") from None
    if not reply.get("ok"):
        raise _worker_error(path, reply)
    result = reply["result"]
    try:
        df = decode_frame(blob, list(result["tagged"]), max_cells=limits.max_cells)
    except (ValueError, TypeError) as exc:
        raise TableLoadError(path, f"the load worker sent an unreadable table: {exc}") from exc
    return Table(id="", df=df, metadata=dict(result["metadata"])), list(result["notes"])


def load_table(
    source: str | Path | pd.DataFrame,
    *,
    id: str | None = None,
    caption: str | None = None,
    table: str | None = None,
    sheet: str | int | None = None,
    block: int | None = None,
    format: str | None = None,
    encoding: str | None = None,
    max_cell_chars: int | None = DEFAULT_MAX_CELL_CHARS,
    quiet: bool = False,
    iso_dates: bool = True,
    limits: LoadLimits | None = None,
    source_settings: SourceSettings | None = None,
    **opts: Any,
) -> Table:
    """Load one table from a file (in a bounded worker), a DataFrame or a database.

    A database URL (``postgresql://user@host/db``, ``sqlite:///file.db``) with
    ``table=`` gives a table that stays in the database; a CSV/Parquet file
    bigger than ``limits.out_of_core_mb`` stays on disk and is scanned by
    DuckDB. Either way ``df`` is a bounded sample and ``Table.source`` does the
    rest (:mod:`tablerag_agents.tables.source_tables`).

    Args:
        source: A file path, a database URL, or an in-memory DataFrame (copied,
            never modified).
        id: Table id (default: the file stem, or ``"dataframe"``).
        caption: Human title (default: a spreadsheet table's title row, else the
            file stem, or ``""`` for a DataFrame).
        table: Table name inside a SQLite/DuckDB file (optional if it has one), or
            in the database of a URL (required there).
        sheet: Sheet name or index inside an ``.xlsx`` (optional if it has one).
        block: Which table of a sheet holding several (1-based; stacked tables
            separated by empty rows); a sheet with several and no ``block`` is
            an error listing them.
        format: Force a format (``csv, tsv, excel, parquet, json, jsonl, sqlite,
            duckdb``) instead of guessing from the extension.
        encoding: Text encoding (default: UTF-8, else detected with a warning).
        max_cell_chars: Longest string cell kept; longer ones are truncated
            with a warning (``None``: keep everything).
        quiet: Log repairs instead of warning (for bulk dataset loading).
        iso_dates: Convert text columns holding only ISO dates to datetimes.
        limits: Memory, time and size limits of reading a file (default:
            :class:`LoadLimits` from the environment).
        source_settings: Limits of a table left in its database or file (default:
            :class:`~tablerag_agents.tables.source.SourceSettings` from the environment).
        **opts: Passed to :func:`pandas.read_csv` for CSV/TSV (``sep``,
            ``escapechar``, ``nrows``...); plain JSON values only.

    Returns:
        The table; ``metadata["source"]`` is the path (and ``metadata["table"]``
        or ``["sheet"]`` the inner name when there is one).

    Raises:
        TableLoadError: For a missing file, a folder, an unknown extension, an
            empty/binary/unparsable file, or a table without rows or columns.
        TableLimitError: For a file past a limit (memory, CPU time, wall clock,
            cells, columns); a subclass of :class:`TableLoadError`.
    """
    if isinstance(source, pd.DataFrame):
        df = clean_frame(
            source,
            id or "dataframe",
            max_cell_chars=max_cell_chars,
            quiet=quiet,
            iso_dates=iso_dates,
        )
        return Table(id=id or "dataframe", df=df, caption=caption or "", metadata={})
    if not isinstance(source, str | Path):
        kind = type(source).__name__
        raise TableLoadError(repr(source)[:80], f"expected a path or a DataFrame, got {kind}")
    if is_database_url(source):
        if table is None:
            raise TableLoadError(str(source).split("@")[-1], "name the table: table='...'")
        return load_database_table(
            str(source), table, id=id, caption=caption, settings=source_settings
        )
    path = Path(source)
    limits = limits or LoadLimits()
    if _out_of_core(path, format, limits):
        return load_file_out_of_core(
            path,
            id=id or path.stem,
            caption=caption if caption is not None else path.stem,
            format={"tsv": "csv"}.get(format or "", format),
            settings=source_settings,
        )
    args: dict[str, Any] = {
        "path": str(path),
        "format": format,
        "table": table,
        "sheet": sheet,
        "block": block,
        "encoding": encoding,
        "max_cell_chars": max_cell_chars,
        "iso_dates": iso_dates,
        "limits": limits.model_dump(),
        "opts": opts,
    }
    try:
        json.dumps(args)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"load_table options must be plain JSON values: {exc}") from exc
    loaded, notes = _read_bounded(path, args, limits)
    report_notes(path, notes, quiet=quiet)
    loaded.id = id or path.stem
    title = loaded.metadata.get("title")
    loaded.caption = caption if caption is not None else str(title or path.stem)
    return loaded


def _out_of_core(path: Path, format: str | None, limits: LoadLimits) -> bool:
    """Whether ``path`` is a CSV/Parquet file past ``limits.out_of_core_mb``."""
    if limits.out_of_core_mb is None or not path.is_file():
        return False
    fmt = format or FORMATS.get(path.suffix.lower())
    big = path.stat().st_size > limits.out_of_core_mb * 1024 * 1024
    return big and fmt in ("csv", "tsv", "parquet")


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


def _load_all_blocks(path: Path, table_id: str, kwargs: dict[str, Any]) -> Iterator[Table]:
    """Every table of one file: one, or one per table of a spreadsheet holding several."""
    is_sheet = kwargs.get("format", FORMATS.get(path.suffix.lower())) == "excel"
    if not is_sheet or "block" in kwargs:
        yield load_table(path, id=table_id, **kwargs)
        return
    first = load_table(path, id=table_id, block=1, **kwargs)
    count = int(first.metadata.get("blocks", 1))
    if count == 1:
        yield first
        return
    first.id = f"{table_id}#1"
    yield first
    for n in range(2, count + 1):
        yield load_table(path, id=f"{table_id}#{n}", block=n, **kwargs)


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
        extension (``"200-csv/0"``), or file stems for a list. A sheet holding
        several tables yields one per table, ids suffixed ``#1``, ``#2``...
    """
    if on_error not in ("warn", "raise"):
        raise ValueError(f"on_error must be 'warn' or 'raise', not {on_error!r}")
    kwargs.setdefault("limits", LoadLimits())  # read the environment once per folder
    skipped = 0
    for path, table_id in _walk(paths_or_folder):
        try:
            yield from _load_all_blocks(path, table_id, kwargs)
        except TableLoadError as exc:
            if on_error == "raise":
                raise
            skipped += 1
            warn(f"skipped {path}: {exc.reason}")
    if skipped:
        logger.info("skipped %d unreadable table file(s)", skipped)
