"""Per-document token vectors for MaxSim, packed in a few large arrays.

A MaxSim index over 100k tables holds ~3M token vectors (2 GB in float16).
:class:`TokenMatrix` keeps one array per batch of documents added (small
batches are merged), so adding, saving and searching never copy the whole
matrix; a saved matrix is opened memory-mapped, so a loaded index reads only
the documents it scores.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tablerag_agents.errors import MalformedIndexError
from tablerag_agents.retrieval.faiss_file import MAX_DIM

TOKENS_FILE = "tokens.npy"
OFFSETS_FILE = "offsets.npy"
MERGE_ROWS = 1 << 16
"""Consecutive arrays are merged while together they hold at most this many token rows."""
FLOAT32_CACHE_BYTES = 1 << 30
"""A float32 copy of the matrix (faster full scans) is kept only up to this size."""


def maxsim_many(
    query_tokens: np.ndarray, tokens: np.ndarray, offsets: np.ndarray, *, chunk: int = 65536
) -> np.ndarray:
    """Score every doc of a packed token matrix at once.

    Args:
        query_tokens: (q, dim) unit vectors.
        tokens: (total, dim) doc token vectors, docs stored one after another.
        offsets: (n_docs + 1,) start of each doc in ``tokens``; doc i is
            ``tokens[offsets[i]:offsets[i + 1]]``. Empty docs score 0.
        chunk: Token rows converted to float32 at a time (bounds memory).

    Returns:
        (n_docs,) float32 MaxSim scores.
    """
    n_docs = len(offsets) - 1
    out = np.zeros(n_docs, dtype=np.float32)
    if n_docs == 0 or len(query_tokens) == 0 or len(tokens) == 0:
        return out
    q = np.ascontiguousarray(query_tokens, dtype=np.float32).T  # (dim, q)
    sims = np.empty((len(tokens), q.shape[1]), dtype=np.float32)
    for start in range(0, len(tokens), chunk):
        block = np.asarray(tokens[start : start + chunk], dtype=np.float32)
        np.matmul(block, q, out=sims[start : start + len(block)])
    starts = offsets[:-1]
    nonempty = offsets[1:] > starts
    best = np.maximum.reduceat(sims, starts[nonempty], axis=0)  # (n_nonempty, q)
    out[nonempty] = best.sum(axis=1)
    return out


class TokenMatrix:
    """Token matrices of docs 0..n-1, stored as arrays of consecutive docs.

    Args:
        dtype: Storage type of the vectors (float16 halves float32's memory).
    """

    def __init__(self, dtype: str = "float16") -> None:
        """Create an empty matrix."""
        self.dtype = np.dtype(dtype)
        self.offsets = np.zeros(1, dtype=np.int64)  # token row where each doc starts
        self._arrays: list[np.ndarray] = []
        self._first_doc: list[int] = []  # doc position of each array's first doc
        self._float32: np.ndarray | None = None

    def __len__(self) -> int:
        """Number of docs."""
        return len(self.offsets) - 1

    @property
    def n_tokens(self) -> int:
        """Token rows over all docs."""
        return int(self.offsets[-1])

    def append(self, mats: Sequence[np.ndarray]) -> None:
        """Add one (n_tokens, dim) matrix per doc, after the existing docs."""
        if not mats:
            return
        lengths = np.asarray([len(m) for m in mats], dtype=np.int64)
        block = np.concatenate([np.asarray(m, dtype=self.dtype) for m in mats])
        first = len(self)
        self.offsets = np.concatenate([self.offsets, self.offsets[-1] + np.cumsum(lengths)])
        self._arrays.append(block)
        self._first_doc.append(first)
        self._float32 = None
        while len(self._arrays) > 1 and len(self._arrays[-2]) + len(block) <= MERGE_ROWS:
            block = np.concatenate([self._arrays[-2], self._arrays.pop()])
            self._arrays[-1] = block
            self._first_doc.pop()

    def doc(self, pos: int) -> np.ndarray:
        """Token matrix of the doc at ``pos`` (a view)."""
        if not 0 <= pos < len(self):
            raise IndexError(pos)
        n = bisect.bisect_right(self._first_doc, pos) - 1
        base = self.offsets[self._first_doc[n]]
        return self._arrays[n][self.offsets[pos] - base : self.offsets[pos + 1] - base]

    def rows(self, start: int, stop: int) -> np.ndarray:
        """Token rows ``start:stop`` over all docs, as float32 (a new array)."""
        parts, first = [], 0
        for array in self._arrays:
            lo, hi = max(start - first, 0), min(stop - first, len(array))
            if lo < hi:
                parts.append(np.asarray(array[lo:hi], dtype=np.float32))
            first += len(array)
        return np.concatenate(parts) if parts else np.zeros((0, self._dim()), np.float32)

    def maxsim_all(self, query_tokens: np.ndarray) -> np.ndarray:
        """MaxSim of every doc, in order (see :func:`maxsim_many`).

        The products run on the same row blocks as over one packed array, so the
        scores are the same to the bit. A float32 copy is kept for the next scans
        while it is at most :data:`FLOAT32_CACHE_BYTES`; a bigger matrix is
        converted block by block at each scan.
        """
        if self._float32 is None and 4 * self.n_tokens * self._dim() <= FLOAT32_CACHE_BYTES:
            self._float32 = self.rows(0, self.n_tokens)
        tokens = self._float32 if self._float32 is not None else _Rows(self)
        return maxsim_many(query_tokens, tokens, self.offsets)  # type: ignore[arg-type]

    def _dim(self) -> int:
        return int(self._arrays[0].shape[1]) if self._arrays else 0

    def save(self, folder: Path) -> None:
        """Write ``tokens.npy`` (array by array, no full copy) and ``offsets.npy``.

        Each file is written beside its name and renamed over it, so a matrix
        opened from the same files (memory-mapped) keeps reading the old ones.
        """
        header = {
            "descr": np.lib.format.dtype_to_descr(self.dtype),
            "fortran_order": False,
            "shape": (self.n_tokens, self._dim()),
        }
        tmp = folder / (TOKENS_FILE + ".tmp")
        with tmp.open("wb") as fh:
            np.lib.format.write_array_header_1_0(fh, header)
            for array in self._arrays:
                fh.write(np.ascontiguousarray(array, dtype=self.dtype).data.cast("B"))
        os.replace(tmp, folder / TOKENS_FILE)
        tmp = folder / (OFFSETS_FILE + ".tmp")
        with tmp.open("wb") as fh:
            np.save(fh, self.offsets, allow_pickle=False)
        os.replace(tmp, folder / OFFSETS_FILE)

    @classmethod
    def load(cls, folder: Path, n_docs: int) -> TokenMatrix:
        """Open a saved matrix of ``n_docs`` docs, memory-mapped (read-only).

        Raises:
            MalformedIndexError: The files do not hold a float matrix whose
                offsets cover exactly ``n_docs`` docs.
        """
        try:
            tokens = np.load(folder / TOKENS_FILE, mmap_mode="r", allow_pickle=False)
            offsets = np.load(folder / OFFSETS_FILE, allow_pickle=False)
        except ValueError as exc:  # bad header, file shorter than its header says
            raise MalformedIndexError(folder, TOKENS_FILE, f"cannot be read: {exc}") from exc
        if tokens.ndim != 2 or tokens.dtype.kind != "f":
            raise MalformedIndexError(folder, TOKENS_FILE, "is not a 2-D float matrix")
        if len(tokens) and not 1 <= tokens.shape[1] <= MAX_DIM:  # (10**12, 0) takes no bytes
            raise MalformedIndexError(
                folder, TOKENS_FILE, f"has {tokens.shape[1]} columns; allowed 1..{MAX_DIM}"
            )
        if (
            offsets.ndim != 1
            or offsets.dtype.kind not in "iu"
            or len(offsets) != n_docs + 1
            or offsets[0] != 0
            or np.any(np.diff(offsets) < 0)
            or offsets[-1] != len(tokens)
        ):
            raise MalformedIndexError(
                folder, OFFSETS_FILE, f"does not split {len(tokens)} token rows into {n_docs} docs"
            )
        self = cls(str(tokens.dtype))
        self.offsets = offsets.astype(np.int64)
        if n_docs:
            self._arrays, self._first_doc = [tokens], [0]
        return self


class _Rows:
    """The rows of a :class:`TokenMatrix` as :func:`maxsim_many` reads them (length, slices)."""

    def __init__(self, matrix: TokenMatrix) -> None:
        self.matrix = matrix

    def __len__(self) -> int:
        return self.matrix.n_tokens

    def __getitem__(self, rows: slice) -> np.ndarray:
        return self.matrix.rows(rows.start or 0, min(rows.stop, self.matrix.n_tokens))
