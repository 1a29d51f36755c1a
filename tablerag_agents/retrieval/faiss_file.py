"""Read a saved FAISS index only after its header has been checked against the file.

A FAISS file states its vector count and dimension in a header, and
``faiss.read_index`` allocates what the header claims before reading: a
90-byte file claiming 2**31 vectors makes it allocate 8 GB. Saved indexes are
untrusted, so :func:`read_flat_index` parses the one layout the library writes
(``IndexIDMap2`` over ``IndexFlatIP``) and refuses any file whose type, sizes
or length disagree, before FAISS sees it; what FAISS then allocates is bounded
by the file's own length.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import faiss

from tablerag_agents.errors import MalformedIndexError

MAX_DIM = 65_536
"""Largest vector dimension accepted (embedding models use a few thousand at most)."""

# fourcc, d, ntotal, two unused int64, is_trained, metric type (write_index_header).
_HEADER = struct.Struct("<4siqqqBi")
_COUNT = struct.Struct("<Q")
_ID_MAP, _FLAT_IP = b"IxM2", b"IxFI"
_INNER_PRODUCT = 0
_FIXED_BYTES = 2 * _HEADER.size + 2 * _COUNT.size
"""Header of the ID map, header of the flat index, and the two vector lengths."""


def flat_index_size(ntotal: int, dim: int) -> int:
    """Bytes of a saved ``IndexIDMap2(IndexFlatIP(dim))`` holding ``ntotal`` vectors."""
    return _FIXED_BYTES + ntotal * (4 * dim + 8)


def check_flat_index(path: Path, *, expected_ntotal: int | None = None) -> tuple[int, int]:
    """Check a saved ID-mapped flat inner-product index without letting FAISS read it.

    Args:
        path: The ``faiss.index`` file.
        expected_ntotal: The vector count the index must hold (its docstore's rows).

    Returns:
        ``(ntotal, dim)`` as the header states them, now known to match the file.

    Raises:
        MalformedIndexError: Another index type or metric, a dimension outside
            1..``MAX_DIM``, counts that disagree, or a length that is not
            exactly what the header implies (truncated, padded or inflated).
    """
    size = path.stat().st_size

    def refuse(reason: str) -> MalformedIndexError:
        return MalformedIndexError(path.parent, path.name, reason)

    if size < _FIXED_BYTES:
        raise refuse(f"has {size} bytes, fewer than any saved index ({_FIXED_BYTES})")
    with path.open("rb") as handle:
        head = handle.read(2 * _HEADER.size + _COUNT.size)
    outer = _HEADER.unpack_from(head, 0)
    inner = _HEADER.unpack_from(head, _HEADER.size)
    (codes,) = _COUNT.unpack_from(head, 2 * _HEADER.size)
    if outer[0] != _ID_MAP or inner[0] != _FLAT_IP:
        raise refuse(
            f"is a {outer[0]!r}/{inner[0]!r} index; only {_ID_MAP!r} over {_FLAT_IP!r} "
            "(what the library writes) is read"
        )
    _, dim, ntotal, *_rest, metric = outer
    if metric != _INNER_PRODUCT or inner[6] != _INNER_PRODUCT:
        raise refuse(f"uses metric {metric}/{inner[6]}, not inner product ({_INNER_PRODUCT})")
    if not 1 <= dim <= MAX_DIM or inner[1] != dim:
        raise refuse(f"claims dimension {dim} (inner {inner[1]}); allowed 1..{MAX_DIM}")
    if ntotal < 0 or inner[2] != ntotal or codes != ntotal * dim:
        raise refuse(
            f"claims {ntotal} vectors (inner {inner[2]}) but {codes} stored floats "
            f"of dimension {dim}"
        )
    if expected_ntotal is not None and ntotal != expected_ntotal:
        raise refuse(f"holds {ntotal} vectors, its docstore {expected_ntotal} documents")
    want = flat_index_size(ntotal, dim)
    if size != want:
        raise refuse(
            f"claims {ntotal} vectors of dimension {dim} ({want} bytes) but has {size} bytes"
        )
    with path.open("rb") as handle:
        handle.seek(want - ntotal * 8 - _COUNT.size)
        (ids,) = _COUNT.unpack(handle.read(_COUNT.size))
    if ids != ntotal:
        raise refuse(f"claims {ntotal} vectors but maps {ids} ids")
    return ntotal, dim


def read_flat_index(path: Path, *, expected_ntotal: int | None = None) -> Any:
    """Check ``path`` (see :func:`check_flat_index`), then read it with FAISS.

    Raises:
        MalformedIndexError: The file fails the check.
    """
    check_flat_index(path, expected_ntotal=expected_ntotal)
    return faiss.read_index(str(path))
