"""Readers for binary table files: Parquet, SQLite and DuckDB (Excel: ``excel_reader``).

Each returns a raw :class:`pandas.DataFrame` whose labels are cleaned later by
:mod:`tablerag_agents.tables.loaders`. Table and sheet names are only ever
matched against the names the file itself lists, and quoted as identifiers, so
a hostile ``table=`` argument cannot inject SQL.

The files are untrusted: their views, macros and triggers are written by
whoever made the file. The only SQL run on them is ``SELECT`` from a table or
view the file lists. DuckDB files are opened read-only with external access
(files, network), extension loading/installing and persistent secrets off and
the configuration locked, so a view such as ``SELECT * FROM
read_text('/etc/passwd')`` fails instead of reading the host. SQLite files are
opened read-only with ``trusted_schema`` off, so views cannot call functions or
virtual tables with side effects (``load_extension``, ``pragma_*``), and
extension loading stays disabled.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from tablerag_agents.errors import TableLoadError
from tablerag_agents.tables.limits import LoadLimits
from tablerag_agents.tables.sql_safety import (
    DUCKDB_UNTRUSTED_CONFIG,
    forbidden_references,
    lock_duckdb,
    quote_ident,
)

if TYPE_CHECKING:
    import duckdb

_SQLITE_MAGIC = b"SQLite format 3\x00"

#: DuckDB types fetched as DuckDB's own text: Python has no exact equivalent
#: (intervals with months, times with an offset) or the object is no plain cell
#: value (UUID, bit strings, arbitrary-size integers).
_AS_TEXT = ("INTERVAL", "UUID", "TIME WITH TIME ZONE", "BIT", "BIGNUM", "VARINT")

#: Date/time types; a column holding infinities or years outside 1-9999 (which
#: Python's datetime cannot hold) is fetched as text instead.
_TEMPORAL = ("DATE", "TIMESTAMP")

#: Integers beyond this lose digits in a float64 column.
_FLOAT_EXACT = 2**53


def pick_name(source: Path, names: Sequence[str], wanted: str | None, kind: str) -> str:
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


def _exact_integers(df: pd.DataFrame, rows: Sequence[Sequence[Any]]) -> pd.DataFrame:
    """Give integer columns with NULLs a nullable integer dtype where float64 would round."""
    for pos in range(df.shape[1]):
        if df.dtypes.iloc[pos].kind != "f":
            continue
        values = [row[pos] for row in rows]
        ints = [v for v in values if v is not None]
        if not (ints and all(type(v) is int for v in ints)):
            continue
        low, high = min(ints), max(ints)
        if max(-low, high) <= _FLOAT_EXACT:
            continue
        if -(2**63) <= low and high < 2**63:
            df.isetitem(pos, pd.Series(values, dtype="Int64"))
        elif low >= 0 and high < 2**64:
            df.isetitem(pos, pd.Series(values, dtype="UInt64"))
        else:  # HUGEINT-sized: Python ints
            df.isetitem(pos, pd.Series(values, dtype=object))
    return df


def _frame(rows: list[Any], columns: Sequence[str]) -> pd.DataFrame:
    """Build a frame from fetched rows (duplicate column names allowed)."""
    df = pd.DataFrame(rows, columns=range(len(columns)))
    return _exact_integers(df, rows).set_axis(list(columns), axis=1)


def _decode_sqlite_text(raw: bytes) -> str:
    # TEXT written by other programs need not be valid UTF-8: keep what is readable.
    return raw.decode("utf-8", errors="replace")


def connect_sqlite(source: Path) -> sqlite3.Connection:
    """Open a SQLite file read-only, its views and triggers unable to cause side effects."""
    uri = source.resolve().as_uri() + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        raise TableLoadError(source, f"cannot open SQLite file: {exc}") from exc
    try:
        if hasattr(conn, "enable_load_extension"):  # absent when Python was built without it
            conn.enable_load_extension(False)
        conn.execute("PRAGMA trusted_schema = OFF")
        conn.execute("PRAGMA cell_size_check = ON")
        trusted = conn.execute("PRAGMA trusted_schema").fetchone()
    except sqlite3.Error as exc:
        conn.close()
        raise TableLoadError(source, f"cannot open SQLite file: {exc}") from exc
    if trusted != (0,):  # SQLite before 3.31 ignores the pragma
        conn.close()
        raise TableLoadError(
            source, f"SQLite {sqlite3.sqlite_version} is too old to distrust the file's schema"
        )
    conn.text_factory = _decode_sqlite_text
    return conn


def _fetch(cursor: Any, source: Path, columns: Sequence[str], limits: LoadLimits) -> pd.DataFrame:
    """Fetch at most one row past ``limits.max_cells`` (a cross join stops early)."""
    limits.check_columns(source, len(columns))
    max_rows = limits.max_rows(len(columns))
    rows = cursor.fetchmany(max_rows + 1)
    limits.check_shape(source, len(rows), len(columns), cut=len(rows) > max_rows)
    return _frame(rows, columns)


def read_sqlite(
    source: Path, table: str | None, limits: LoadLimits | None = None
) -> tuple[pd.DataFrame, str]:
    """Read one table or view of a SQLite file (read-only, schema untrusted).

    Returns:
        The frame and the chosen table name.
    """
    with source.open("rb") as fh:
        if fh.read(len(_SQLITE_MAGIC)) != _SQLITE_MAGIC:
            raise TableLoadError(source, "not a SQLite database (bad file header)")
    conn = connect_sqlite(source)
    try:
        rows = conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ).fetchall()
        name = pick_name(source, [r[0] for r in rows], table, "table")
        cur = conn.execute(f"SELECT * FROM {quote_ident(name)}")  # name comes from sqlite_master
        columns = [d[0] for d in cur.description]
        df = _fetch(cur, source, columns, limits or LoadLimits())
    except sqlite3.Error as exc:
        raise TableLoadError(source, f"SQLite error: {exc}") from exc
    finally:
        conn.close()
    return df, name


def _connect_duckdb(source: Path) -> duckdb.DuckDBPyConnection:
    """Open a DuckDB file read-only, with external access off and the configuration locked."""
    import duckdb

    try:
        conn = duckdb.connect(str(source), read_only=True, config=DUCKDB_UNTRUSTED_CONFIG)
    except duckdb.Error as exc:
        raise TableLoadError(source, f"cannot open DuckDB file: {exc}") from exc
    try:
        lock_duckdb(conn)
    except duckdb.Error as exc:
        conn.close()
        raise TableLoadError(source, f"cannot lock the DuckDB configuration: {exc}") from exc
    return conn


def _refuse_metadata(conn: duckdb.DuckDBPyConnection, source: Path) -> None:
    """Refuse a file whose views, macros or table definitions read DuckDB's metadata.

    ``duckdb_settings()``, ``duckdb_databases()``, ``current_setting()``... would
    load the host's paths and settings as cells (see
    :func:`~tablerag_agents.tables.sql_safety.forbidden_references`).
    """
    objects = conn.execute(
        "SELECT 'view', view_name, sql FROM duckdb_views() WHERE NOT internal "
        "UNION ALL SELECT 'macro', function_name, macro_definition FROM duckdb_functions() "
        "WHERE NOT internal AND macro_definition IS NOT NULL "
        "UNION ALL SELECT 'table', table_name, sql FROM duckdb_tables() WHERE NOT internal"
    ).fetchall()
    for kind, name, sql in objects:
        found = forbidden_references(str(sql or ""))
        if found:
            raise TableLoadError(
                source,
                f"refused: {kind} {name!r} reads DuckDB's metadata or state "
                f"({', '.join(found)}), which would expose the host's settings and paths",
            )


def _duckdb_select(
    conn: duckdb.DuckDBPyConnection, ref: str, source: Path, limits: LoadLimits
) -> tuple[str, list[str], list[int]]:
    """Build the SELECT that reads ``ref`` with Python-friendly types.

    Returns:
        The query, the column names, and the positions of the TIMESTAMPTZ columns
        (fetched as UTC timestamps without a zone).

    Raises:
        TableLimitError: If ``ref`` has too many columns.
    """
    described = conn.execute(f"DESCRIBE SELECT * FROM {ref}").fetchall()
    names = [str(row[0]) for row in described]
    limits.check_columns(source, len(names))
    max_rows = limits.max_rows(len(names))
    types = [str(row[1]).upper() for row in described]
    temporal = [i for i, t in enumerate(types) if t.startswith(_TEMPORAL)]
    as_text = {i for i, t in enumerate(types) if t.startswith(_AS_TEXT)}
    if temporal:
        checks = ", ".join(
            f"coalesce(bool_or(NOT isfinite(#{i + 1}) OR year(#{i + 1}) NOT BETWEEN 1 AND 9999),"
            " false)"
            for i in temporal
        )
        flags = (
            conn.execute(
                f"SELECT {checks} FROM (SELECT * FROM {ref} LIMIT {max_rows + 1})"
            ).fetchone()
            or ()
        )
        as_text.update(i for i, flag in zip(temporal, flags, strict=True) if flag)
    exprs: list[str] = []
    utc: list[int] = []
    for i, sql_type in enumerate(types):
        col = f"#{i + 1}"  # positional: column names may repeat
        if i in as_text:
            exprs.append(f"CAST({col} AS VARCHAR)")
        elif sql_type.startswith("TIMESTAMP WITH TIME ZONE"):
            exprs.append(f"CAST({col} AS TIMESTAMP)")
            utc.append(i)
        elif sql_type == "DATE":  # a datetime column, like ISO dates from CSV
            exprs.append(f"CAST({col} AS TIMESTAMP)")
        else:
            exprs.append(col)
    return f"SELECT {', '.join(exprs)} FROM {ref}", names, utc


def read_duckdb(
    source: Path, table: str | None, limits: LoadLimits | None = None
) -> tuple[pd.DataFrame, str]:
    """Read one table or view of a DuckDB file (read-only, nothing outside the file).

    Timestamps with a time zone load as UTC (no ``pytz`` needed), dates as
    timestamps, and intervals, UUIDs, times with an offset and infinite dates as
    DuckDB's text. A file whose views, macros or tables read DuckDB's metadata
    is refused.

    Returns:
        The frame and the chosen table name (``schema.table`` outside ``main``).
    """
    import duckdb

    limits = limits or LoadLimits()
    conn = _connect_duckdb(source)
    try:
        _refuse_metadata(conn, source)
        rows = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_schema NOT IN ('information_schema', 'pg_catalog') "
            "ORDER BY table_schema, table_name"
        ).fetchall()
        qualified = {(n if s == "main" else f"{s}.{n}"): (s, n) for s, n in rows}
        name = pick_name(source, list(qualified), table, "table")
        schema, bare = qualified[name]
        ref = f"{quote_ident(schema)}.{quote_ident(bare)}"
        sql, columns, utc = _duckdb_select(conn, ref, source, limits)
        df = _fetch(conn.execute(sql), source, columns, limits)
    except duckdb.PermissionException as exc:
        raise TableLoadError(source, f"refused: the table reads outside the file ({exc})") from exc
    except duckdb.Error as exc:
        raise TableLoadError(source, f"DuckDB error: {exc}") from exc
    finally:
        conn.close()
    for pos in utc:
        df.isetitem(pos, pd.to_datetime(df.iloc[:, pos]).dt.tz_localize("UTC"))
    return df, name


def read_parquet(source: Path, limits: LoadLimits | None = None) -> pd.DataFrame:
    """Read a Parquet file, refusing one whose footer claims too many columns or cells."""
    import pyarrow.parquet as pq

    limits = limits or LoadLimits()
    try:
        with pq.ParquetFile(source) as parquet:
            meta = parquet.metadata
            limits.check_shape(source, meta.num_rows, meta.num_columns)
            return parquet.read(use_threads=False).to_pandas()
    except (ValueError, OSError) as exc:
        raise TableLoadError(source, f"not a readable Parquet file: {exc}") from exc
