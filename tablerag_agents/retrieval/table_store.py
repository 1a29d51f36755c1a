"""On-disk store of whole tables (one Parquet file each + a Parquet catalog), no pickle.

A saved index may come from someone else: the file names in its catalog must be
plain ``.parquet`` names, and neither they nor the catalog may resolve (through
a symlink) outside the store's folder.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from tablerag_agents.errors import MalformedIndexError, UnsafeIndexError
from tablerag_agents.tables.model import Table

logger = logging.getLogger(__name__)

_CATALOG = "catalog.parquet"


def _json_default(value: Any) -> Any:
    return str(value)


def _plain_name(folder: Path, name: object) -> str:
    """Return ``name`` if it is a plain ``.parquet`` file name, else raise ``UnsafeIndexError``."""
    if not isinstance(name, str) or not name or "\x00" in name:
        raise UnsafeIndexError(folder, name, "is not a plain .parquet file name")
    path = Path(name)
    if path.is_absolute():
        raise UnsafeIndexError(folder, name, "is an absolute path")
    if ".." in path.parts:
        raise UnsafeIndexError(folder, name, "climbs out of the folder with '..'")
    if len(path.parts) != 1 or path.suffix != ".parquet":
        raise UnsafeIndexError(folder, name, "is not a plain .parquet file name")
    return name


def _inside(folder: Path, name: str) -> Path:
    """Return ``folder / name`` resolved, refusing a symlink that leads out of ``folder``."""
    resolved = (folder / name).resolve()
    if not resolved.is_relative_to(folder.resolve()):
        raise UnsafeIndexError(folder, name, f"resolves outside the folder (to {resolved})")
    return resolved


def checked_file(folder: Path, name: str, *, suffix: str | None = None) -> Path:
    """``folder / name`` for a plain existing file name that stays inside ``folder``.

    Raises:
        UnsafeIndexError: The name is not plain (or lacks ``suffix``), or it
            resolves outside the folder (a symlink).
        MalformedIndexError: The file does not exist.
    """
    path = Path(name)
    if (
        not name
        or "\x00" in name
        or path.is_absolute()
        or len(path.parts) != 1
        or name in (".", "..")
        or (suffix is not None and path.suffix != suffix)
    ):
        kind = f"{suffix} file" if suffix else "file"
        raise UnsafeIndexError(folder, name, f"is not a plain {kind} name")
    resolved = _inside(folder, name)
    if not resolved.exists():
        raise MalformedIndexError(folder, name, "is missing")
    return resolved


class TableStore:
    """Tables kept under ``folder/``: ``catalog.parquet`` plus ``NNNNNN.parquet`` per table.

    The catalog holds id, caption, metadata (JSON) and file name; frames are read
    lazily by :meth:`get`. Files are numbered, so any table id is safe.
    """

    def __init__(self, folder: str | Path) -> None:
        """Open (or prepare) the store at ``folder``; nothing is written until ``add``."""
        self.folder = Path(folder)
        self._rows: dict[str, tuple[str, str, str]] = {}  # id -> (caption, metadata, file)
        catalog = self.folder / _CATALOG
        if catalog.is_file():
            frame = pd.read_parquet(_inside(self.folder, _CATALOG))
            for tid, caption, meta, file in frame.itertuples(index=False, name=None):
                self._rows[tid] = (caption, meta, _plain_name(self.folder, file))

    def __len__(self) -> int:
        """Number of stored tables."""
        return len(self._rows)

    def __contains__(self, table_id: object) -> bool:
        """Whether a table id is stored."""
        return table_id in self._rows

    def ids(self) -> list[str]:
        """Stored table ids in insertion order."""
        return list(self._rows)

    def caption(self, table_id: str) -> str:
        """Caption of a stored table (KeyError if unknown)."""
        return self._rows[table_id][0]

    def _next_number(self) -> int:
        """First file number after every stored one (removals leave gaps, never reuse)."""
        numbers = [int(f[:-8]) for _, _, f in self._rows.values() if f[:-8].isdigit()]
        return max(numbers, default=-1) + 1

    def add(self, tables: Iterable[Table]) -> None:
        """Write tables (ids must be new) and update the catalog."""
        self.folder.mkdir(parents=True, exist_ok=True)
        n = self._next_number()
        for table in tables:
            if table.id in self._rows:
                raise ValueError(f"duplicate table id {table.id!r}")
            file = f"{n:06d}.parquet"
            meta = write_table_file(table, self.folder / file)
            self._rows[table.id] = (table.caption, meta, file)
            n += 1
        self._write_catalog()

    def adopt(self, entries: Sequence[StagedTable]) -> None:
        """Take in table files written by :func:`write_table_file` elsewhere (ids must be new).

        Each file is hard-linked into the store (copied across file systems), so
        the staged file stays valid until its owner deletes it.
        """
        self.folder.mkdir(parents=True, exist_ok=True)
        n = self._next_number()
        for entry in entries:
            if entry.table_id in self._rows:
                raise ValueError(f"duplicate table id {entry.table_id!r}")
            file = f"{n:06d}.parquet"
            target = self.folder / file
            target.unlink(missing_ok=True)  # left by an interrupted save
            try:
                os.link(entry.path, target)
            except OSError:
                shutil.copyfile(entry.path, target)
            self._rows[entry.table_id] = (entry.caption, entry.metadata, file)
            n += 1
        self._write_catalog()

    def remove(self, table_ids: Iterable[str]) -> int:
        """Delete stored tables (unknown ids are ignored); returns how many were removed."""
        files = [self._rows.pop(t)[2] for t in table_ids if t in self._rows]
        if files:
            self._write_catalog()
            for file in files:
                _inside(self.folder, file).unlink(missing_ok=True)
        return len(files)

    def _write_catalog(self) -> None:
        items = list(self._rows.items())
        pd.DataFrame(
            {
                "table_id": [tid for tid, _ in items],
                "caption": [row[0] for _, row in items],
                "metadata": [row[1] for _, row in items],
                "file": [row[2] for _, row in items],
            }
        ).to_parquet(self.folder / _CATALOG, index=False, compression="zstd")

    def get(self, table_id: str) -> Table:
        """Read one table back (KeyError if unknown; ``UnsafeIndexError`` for a symlink out)."""
        caption, meta, file = self._rows[table_id]
        df = pd.read_parquet(_inside(self.folder, file))
        return Table(id=table_id, df=df, caption=caption, metadata=json.loads(meta))

    def get_many(self, table_ids: Sequence[str]) -> list[Table]:
        """Read several tables back, in the given order."""
        return [self.get(t) for t in table_ids]


@dataclass(frozen=True)
class StagedTable:
    """A table file written ahead of its store (see :meth:`TableStore.adopt`).

    Attributes:
        table_id: The table's id.
        caption: Its caption.
        metadata: Its metadata as JSON (as :func:`write_table_file` returned it).
        path: The Parquet file.
    """

    table_id: str
    caption: str
    metadata: str
    path: Path


def read_staged(entry: StagedTable) -> Table:
    """Read back a table written by :func:`write_table_file`."""
    df = pd.read_parquet(entry.path)
    meta = json.loads(entry.metadata)
    return Table(id=entry.table_id, df=df, caption=entry.caption, metadata=meta)


def write_table_file(table: Table, path: Path) -> str:
    """Write one table's cells to ``path`` (Parquet); return its metadata as catalog JSON."""
    _write_frame(table.df, path)
    return json.dumps(table.metadata, default=_json_default)


def _write_frame(df: pd.DataFrame, path: Path) -> None:
    """Write a frame to Parquet; columns pyarrow cannot type (mixed objects) become strings."""
    frame = df.copy()
    frame.columns = [str(c) for c in frame.columns]
    frame = frame.reset_index(drop=True)
    try:
        frame.to_parquet(path, index=False, compression="zstd")
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        mixed = [c for c in frame.columns if frame[c].dtype == object]
        logger.info("%s: storing mixed-type columns %s as strings", path.name, mixed)
        for col in mixed:
            frame[col] = frame[col].map(lambda v: None if v is None else str(v))
        frame.to_parquet(path, index=False, compression="zstd")
