"""The on-disk log of an indexing run, so a killed ``tablerag index`` resumes where it stopped.

While a run adds tables to the index at ``out``, each finished batch is written
to ``out/.resume/batch-NNNNNN/``: the tables' texts and BM25 tokens, their
vectors and token matrices, and their cells (one Parquet file each). A batch is
written into ``batch-NNNNNN.tmp/`` and renamed when complete, so a batch cut
short by a crash is never read. ``state.json`` records what keys the run (input
files, embeddings, index parameters, engine, batch size, and the index it
started from); a rerun with other arguments is refused. When the run ends the
index is saved and the log removed.

The folder is untrusted input when read back: file names are fixed, every file
must stay inside the log (no symlink out), arrays are read without pickle and
checked against the batch's table count before use.
"""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Collection, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tablerag_agents.errors import MalformedIndexError, ResumeMismatchError
from tablerag_agents.retrieval.corpus_build import EncodedBatch
from tablerag_agents.retrieval.corpus_prep import PreparedTable
from tablerag_agents.retrieval.faiss_file import MAX_DIM
from tablerag_agents.retrieval.table_store import StagedTable, checked_file

logger = logging.getLogger(__name__)

RESUME_DIR = ".resume"
STATE = "state.json"
LOG_VERSION = 1
MAX_TOKENS_PER_TEXT = 4096
"""Most token vectors one table's MaxSim matrix may hold when read back."""
_MAX_JSON_BYTES = 64 << 20
_TABLES = "tables.parquet"
_UNITS = "units.json"
_CELLS = "tables"


def _batch_name(number: int) -> str:
    return f"batch-{number:06d}"


class ResumeLog:
    """The committed batches of one indexing run into ``out`` (see the module docstring).

    Args:
        out: The index folder.
        key: What the run depends on (JSON values); a log with another key is refused.
    """

    def __init__(self, out: Path, key: dict[str, Any]) -> None:
        """Open the run's log at ``out/.resume``, creating it or checking its key."""
        self.folder = out / RESUME_DIR
        self.key = key
        self.extra: dict[str, Any] = {}
        if self.folder.is_symlink():
            raise MalformedIndexError(out, RESUME_DIR, "is a symlink")
        self.committed = 0
        while (self.folder / _batch_name(self.committed)).is_dir():
            self.committed += 1
        if (self.folder / STATE).is_file():
            found = _read_json(self.folder, STATE)
            if not isinstance(found, dict) or found.get("version") != LOG_VERSION:
                raise MalformedIndexError(self.folder, STATE, "is not a resume state")
            found_key = found.get("key")
            if found_key != key and self.committed:
                old = found_key if isinstance(found_key, dict) else {}
                raise ResumeMismatchError(self.folder, key, old)
            extra = found.get("extra")
            if found_key == key and isinstance(extra, dict):
                self.extra = extra
        self._write_state()  # a run that stopped before its first batch is simply replaced
        for stale in self.folder.glob("batch-*.tmp"):
            shutil.rmtree(stale)  # a batch cut short by the crash: done again

    @staticmethod
    def exists(out: Path) -> bool:
        """Whether ``out`` holds the log of an unfinished run."""
        return (out / RESUME_DIR / STATE).is_file()

    @staticmethod
    def discard(out: Path) -> None:
        """Delete the log of an unfinished run (nothing if there is none)."""
        folder = out / RESUME_DIR
        if folder.is_symlink():
            folder.unlink()
        elif folder.exists():
            shutil.rmtree(folder)

    def remember(self, **extra: Any) -> None:
        """Record values the rerun must reuse (e.g. a generated collection name)."""
        self.extra.update(extra)
        self._write_state()

    def _write_state(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        data = {"version": LOG_VERSION, "key": self.key, "extra": self.extra}
        tmp = self.folder / f"{STATE}.tmp"
        tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
        tmp.replace(self.folder / STATE)

    # ------------------------------------------------------------------ writing
    def cells_dir(self, number: int) -> Path:
        """Where batch ``number``'s table files go before it is committed (created empty)."""
        folder = self.folder / f"{_batch_name(number)}.tmp" / _CELLS
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def commit(
        self,
        number: int,
        units: Sequence[str],
        prepared: Sequence[PreparedTable],
        encoded: EncodedBatch,
    ) -> None:
        """Write batch ``number`` next to its table files, then rename it into place."""
        if number != self.committed:
            raise ValueError(f"batch {number} committed out of order (expected {self.committed})")
        tmp = self.cells_dir(number).parent
        (tmp / _UNITS).write_text(json.dumps(list(units)), encoding="utf-8")
        _frame(prepared, tmp).to_parquet(tmp / _TABLES, index=False, compression="zstd")
        if encoded.dense is not None:
            np.save(tmp / "dense.npy", encoded.dense, allow_pickle=False)
        if encoded.rows is not None:
            np.save(tmp / "rows.npy", encoded.rows, allow_pickle=False)
        if encoded.colbert is not None:
            mats = encoded.colbert
            lengths = np.asarray([len(m) for m in mats], dtype=np.int64)
            np.save(tmp / "colbert_lengths.npy", lengths, allow_pickle=False)
            dim = mats[0].shape[1] if mats else 0
            packed = np.concatenate(mats) if mats else np.zeros((0, dim), np.float32)
            np.save(tmp / "colbert_tokens.npy", packed, allow_pickle=False)
        final = self.folder / _batch_name(number)
        tmp.replace(final)
        self.committed += 1
        for item in prepared:  # their cells now live in the committed folder
            if item.stored is not None:
                item.stored = replace(item.stored, path=final / _CELLS / item.stored.path.name)

    def finish(self) -> None:
        """Remove the log of a run whose index was saved."""
        done = self.folder.with_name(RESUME_DIR + ".done")
        if done.exists():
            shutil.rmtree(done)
        self.folder.replace(done)  # one rename: a crash now leaves no half-deleted log
        shutil.rmtree(done)

    # ------------------------------------------------------------------ reading
    def read(
        self, number: int, fields: Sequence[str], channels: Collection[str], *, max_units: int
    ) -> tuple[list[str], list[PreparedTable], EncodedBatch]:
        """Read committed batch ``number``: its units, prepared tables and embeddings.

        ``fields`` are the index's BM25 fields, ``channels`` all its channel names.

        Raises:
            MalformedIndexError: A file is missing, escapes the log, or disagrees
                with the batch's table count.
        """
        folder = checked_file(self.folder, _batch_name(number), suffix="")
        units = _read_json(folder, _UNITS)
        if (
            not isinstance(units, list)
            or len(units) > max_units
            or not all(isinstance(u, str) for u in units)
        ):
            raise MalformedIndexError(folder, _UNITS, f"is not a list of at most {max_units} ids")
        frame = pd.read_parquet(checked_file(folder, _TABLES))
        prepared = _prepared(frame, folder, fields)
        ids = [p.table_id for p in prepared]
        if len(set(ids)) != len(ids) or not set(ids) <= set(units):
            raise MalformedIndexError(folder, _TABLES, "holds tables that are not its units")
        n = len(prepared)
        encoded = EncodedBatch()
        if n == 0:
            return units, prepared, encoded
        if "dense" in channels:
            encoded.dense = _array(folder, "dense.npy", np.float32, rows=n)
        if "rows" in channels:
            n_rows = sum(len(p.rows) for p in prepared)
            encoded.rows = _array(folder, "rows.npy", np.float32, rows=n_rows)
        if "colbert" in channels:
            encoded.colbert = _token_mats(folder, n)
        return units, prepared, encoded


def _frame(prepared: Sequence[PreparedTable], folder: Path) -> pd.DataFrame:
    """One row per table; token lists and rows as list columns, file names relative."""
    names = sorted({name for p in prepared for name in p.tokens})
    data: dict[str, Any] = {
        "table_id": [p.table_id for p in prepared],
        "caption": [p.caption for p in prepared],
        "section": [p.section for p in prepared],
        "field_meta": [p.fields["meta"] for p in prepared],
    }
    for name in names:
        data[f"field_{name}"] = [p.fields[name] for p in prepared]
        data[f"tokens_{name}"] = [p.tokens[name] for p in prepared]
    data["rows"] = [p.rows for p in prepared]
    data["metadata"] = [p.stored.metadata if p.stored else None for p in prepared]
    data["file"] = [
        p.stored.path.relative_to(folder).as_posix() if p.stored else None for p in prepared
    ]
    return pd.DataFrame(data)


def _prepared(frame: pd.DataFrame, folder: Path, fields: Sequence[str]) -> list[PreparedTable]:
    want = {"table_id", "caption", "section", "field_meta", "rows", "metadata", "file"}
    want |= {f"{kind}_{name}" for name in fields for kind in ("field", "tokens")}
    if len(frame) and set(frame.columns) != want:  # an empty batch (all unreadable) has none
        raise MalformedIndexError(folder, _TABLES, f"has columns {sorted(frame.columns)}")
    cells: Path | None = None
    out = []
    for row in frame.to_dict("records"):
        texts = {"meta": row["field_meta"], **{n: row[f"field_{n}"] for n in fields}}
        tokens = {n: [str(t) for t in row[f"tokens_{n}"]] for n in fields}
        strings = [row["table_id"], row["caption"], row["section"], *texts.values()]
        if not all(isinstance(v, str) for v in strings):
            raise MalformedIndexError(folder, _TABLES, "has a non-text id, caption or field")
        stored = None
        if isinstance(row["file"], str):  # a missing value reads back as None or NaN
            name = row["file"].removeprefix(f"{_CELLS}/")
            cells = cells or checked_file(folder, _CELLS, suffix="")  # not a symlink out
            path = checked_file(cells, name, suffix=".parquet")
            stored = StagedTable(row["table_id"], row["caption"], str(row["metadata"]), path)
        rows = [str(r) for r in row["rows"]]
        out.append(
            PreparedTable(
                row["table_id"], row["caption"], row["section"], texts, tokens, rows, stored
            )
        )
    return out


def _read_json(folder: Path, name: str) -> Any:
    path = checked_file(folder, name, suffix=".json")
    if path.stat().st_size > _MAX_JSON_BYTES:
        raise MalformedIndexError(folder, name, f"is larger than {_MAX_JSON_BYTES} bytes")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise MalformedIndexError(folder, name, f"is not JSON: {exc}") from None


def _array(
    folder: Path, name: str, dtype: Any, *, rows: int, ndim: int = 2, max_rows: int | None = None
) -> np.ndarray:
    """Read a ``.npy`` whose header matches; its size is bounded by the file's own length."""
    path = checked_file(folder, name)
    try:
        mapped = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise MalformedIndexError(folder, name, f"is not a readable array: {exc}") from None
    ok_rows = mapped.shape[0] == rows if max_rows is None else mapped.shape[0] <= max_rows
    ok_dim = ndim == 1 or (mapped.shape[1] <= MAX_DIM and (rows == 0 or mapped.shape[1] >= 1))
    if mapped.dtype != dtype or mapped.ndim != ndim or not ok_rows or not ok_dim:
        raise MalformedIndexError(
            folder, name, f"holds {mapped.dtype} {mapped.shape}, not {rows} rows of {dtype}"
        )
    return np.array(mapped)


def _token_mats(folder: Path, n: int) -> list[np.ndarray]:
    lengths = _array(folder, "colbert_lengths.npy", np.int64, rows=n, ndim=1)
    if (lengths < 0).any() or (lengths > MAX_TOKENS_PER_TEXT).any():
        raise MalformedIndexError(folder, "colbert_lengths.npy", "has impossible lengths")
    total = int(lengths.sum())
    path = checked_file(folder, "colbert_tokens.npy")
    dtype = np.load(path, mmap_mode="r", allow_pickle=False).dtype
    if dtype not in (np.float16, np.float32):
        raise MalformedIndexError(folder, "colbert_tokens.npy", f"holds {dtype}")
    tokens = _array(folder, "colbert_tokens.npy", dtype, rows=total)
    return np.split(tokens, np.cumsum(lengths)[:-1]) if n else []
