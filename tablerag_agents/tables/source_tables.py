"""Tables backed by a :class:`~tablerag_agents.tables.source.TableSource`: a sample in memory.

:func:`load_table` and :func:`~tablerag_agents.tables.loaders.load_tables` come
here for a database URL (``postgresql://...``, ``sqlite:///file.db``) with
table names, and for a CSV/Parquet file bigger than
:attr:`~tablerag_agents.tables.limits.LoadLimits.out_of_core_mb`. The
:class:`~tablerag_agents.tables.model.Table` holds the source and only a
bounded sample (``SourceSettings.sample_rows``) as its ``df``; the schema and
cell databases and the SQL solver work on the source itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from tablerag_agents.errors import TableLoadError
from tablerag_agents.tables.model import Table
from tablerag_agents.tables.source import SourceSettings, TableSource
from tablerag_agents.tables.source_remote import DatabaseSource, FileSource

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")


def is_database_url(text: object) -> bool:
    """Whether ``text`` is a URL (``scheme://...``) rather than a path."""
    return isinstance(text, str) and _URL.match(text) is not None


def source_table(
    source: TableSource,
    *,
    id: str,
    caption: str,
    settings: SourceSettings | None = None,
) -> Table:
    """A :class:`Table` over ``source`` whose ``df`` is its first ``sample_rows`` rows.

    Raises:
        TableLoadError: The table has no rows.
    """
    settings = settings or SourceSettings()
    sample = source.sample(settings.sample_rows)
    if sample.empty:
        raise TableLoadError(source.label, "the table has no rows")
    metadata = {"source": source.label, "table": source.name, "sample_rows": len(sample)}
    return Table(id=id, df=sample, caption=caption, metadata=metadata, source=source)


def load_database_table(
    url: str,
    table: str,
    *,
    id: str | None = None,
    caption: str | None = None,
    settings: SourceSettings | None = None,
) -> Table:
    """One table of a PostgreSQL or SQLite database, left in the database.

    Raises:
        TableLoadError: Unsupported URL, unknown table, refused connection, no rows.
    """
    source = DatabaseSource(url, table, settings=settings)
    return source_table(source, id=id or table, caption=caption or table, settings=settings)


def load_database_tables(
    url: str, tables: Sequence[str], *, settings: SourceSettings | None = None
) -> list[Table]:
    """Several tables of one database (ids are the table names)."""
    if not tables:
        raise TableLoadError(url.split("@")[-1], "name the tables to use (tables=[...])")
    return [load_database_table(url, name, settings=settings) for name in tables]


def load_file_out_of_core(
    path: Path,
    *,
    id: str,
    caption: str,
    format: str | None = None,
    settings: SourceSettings | None = None,
) -> Table:
    """A CSV/Parquet file scanned by DuckDB where it is, never loaded whole."""
    source = FileSource(path, name=id, format=format, settings=settings)
    return source_table(source, id=id, caption=caption, settings=settings)
