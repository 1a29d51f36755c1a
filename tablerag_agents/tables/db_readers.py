"""Readers for binary table files: Excel, Parquet, SQLite and DuckDB.

Each returns a raw :class:`pandas.DataFrame` whose labels are cleaned later by
:mod:`tablerag_agents.tables.loaders`. Table and sheet names are only ever
matched against the names the file itself lists, and quoted as identifiers, so
a hostile ``table=`` argument cannot inject SQL.
"""

from __future__ import annotations

import sqlite3
import zipfile
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from tablerag_agents.errors import TableLoadError

_SQLITE_MAGIC = b"SQLite format 3\x00"


def _pick(source: Path, names: Sequence[str], wanted: str | None, kind: str) -> str:
    """Choose ``wanted`` among ``names``, or the only one when ``wanted`` is None."""
    if not names:
        raise TableLoadError(source, f"file has no {kind}s")
    if wanted is None:
        if len(names) == 1:
            return names[0]
        raise TableLoadError(
            source, f"file has {len(names)} {kind}s, pass {kind}=one of {list(names)}"
        )
    if wanted not in names:
        raise TableLoadError(source, f"no {kind} {wanted!r}; {kind}s are {list(names)}")
    return wanted


def _quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def read_sqlite(source: Path, table: str | None) -> tuple[pd.DataFrame, str]:
    """Read one table or view of a SQLite file (opened read-only).

    Returns:
        The frame and the chosen table name.
    """
    with source.open("rb") as fh:
        if fh.read(len(_SQLITE_MAGIC)) != _SQLITE_MAGIC:
            raise TableLoadError(source, "not a SQLite database (bad file header)")
    uri = source.resolve().as_uri() + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        raise TableLoadError(source, f"cannot open SQLite file: {exc}") from exc
    try:
        rows = conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ).fetchall()
        name = _pick(source, [r[0] for r in rows], table, "table")
        cur = conn.execute(f"SELECT * FROM {_quote_ident(name)}")  # name comes from sqlite_master
        columns = [d[0] for d in cur.description]
        df = pd.DataFrame(cur.fetchall(), columns=range(len(columns))).set_axis(columns, axis=1)
    except sqlite3.Error as exc:
        raise TableLoadError(source, f"SQLite error: {exc}") from exc
    finally:
        conn.close()
    return df, name


def read_duckdb(source: Path, table: str | None) -> tuple[pd.DataFrame, str]:
    """Read one table or view of a DuckDB file (opened read-only).

    Returns:
        The frame and the chosen table name (``schema.table`` outside ``main``).
    """
    import duckdb

    try:
        conn = duckdb.connect(str(source), read_only=True)
    except duckdb.Error as exc:
        raise TableLoadError(source, f"cannot open DuckDB file: {exc}") from exc
    try:
        rows = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_schema NOT IN ('information_schema', 'pg_catalog') "
            "ORDER BY table_schema, table_name"
        ).fetchall()
        qualified = {(n if s == "main" else f"{s}.{n}"): (s, n) for s, n in rows}
        name = _pick(source, list(qualified), table, "table")
        schema, bare = qualified[name]
        rel = conn.execute(f"SELECT * FROM {_quote_ident(schema)}.{_quote_ident(bare)}")
        columns = [d[0] for d in rel.description]
        df = pd.DataFrame(rel.fetchall(), columns=range(len(columns))).set_axis(columns, axis=1)
    except duckdb.Error as exc:
        raise TableLoadError(source, f"DuckDB error: {exc}") from exc
    finally:
        conn.close()
    return df, name


def read_excel(source: Path, sheet: str | int | None) -> tuple[pd.DataFrame, str]:
    """Read one sheet of an ``.xlsx`` workbook; the first row is the header.

    Returns:
        The frame (header row still as the first data row's labels) and the sheet name.
    """
    try:
        book = pd.ExcelFile(source, engine="openpyxl")
    except (zipfile.BadZipFile, ValueError, OSError, KeyError) as exc:
        raise TableLoadError(source, f"not a readable .xlsx workbook: {exc}") from exc
    with book:
        names = [str(s) for s in book.sheet_names]
        if isinstance(sheet, int):
            if not 0 <= sheet < len(names):
                raise TableLoadError(source, f"no sheet #{sheet}; sheets are {names}")
            name = names[sheet]
        else:
            name = _pick(source, names, sheet, "sheet")
        try:
            raw = pd.read_excel(book, sheet_name=name, header=None)
        except (ValueError, KeyError) as exc:
            raise TableLoadError(source, f"cannot read sheet {name!r}: {exc}") from exc
    raw = raw.dropna(how="all").dropna(axis=1, how="all")
    if raw.empty:
        raise TableLoadError(source, f"sheet {name!r} is empty")
    header = raw.iloc[0].tolist()
    body = raw.iloc[1:].reset_index(drop=True)
    body = body.infer_objects()
    return body.set_axis(header, axis=1), name


def read_parquet(source: Path) -> pd.DataFrame:
    """Read a Parquet file."""
    try:
        return pd.read_parquet(source)
    except (ValueError, OSError) as exc:
        raise TableLoadError(source, f"not a readable Parquet file: {exc}") from exc
