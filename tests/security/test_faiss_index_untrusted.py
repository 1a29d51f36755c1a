"""Saved FAISS indexes are untrusted: a lying header is refused before FAISS allocates for it.

The hostile file is 98 bytes whose headers claim 2**31 vectors: ``faiss.read_index``
sizes an 8 GB buffer from that claim before reading. Loaded in a child process
whose address space is capped at 512 MB above its imports, the old load died
with ``MemoryError: std::bad_alloc``; now the header check refuses it at once.
"""

from __future__ import annotations

import struct
from pathlib import Path

import faiss
import numpy as np
import pandas as pd
import pytest
from hostile_faiss import claimed_index_bytes, hostile_store, load_in_child
from langchain_core.embeddings import DeterministicFakeEmbedding

from tablerag_agents.errors import CorpusIndexError, MalformedIndexError, UnsafeIndexError
from tablerag_agents.retrieval.faiss_file import check_flat_index, flat_index_size
from tablerag_agents.retrieval.vectorstore import FaissVectorStore

CLAIM = 2**31


def _saved(folder: Path, n: int = 3, dim: int = 4) -> Path:
    store = FaissVectorStore(DeterministicFakeEmbedding(size=dim))
    store.add_texts([f"text {i}" for i in range(n)], ids=[f"d{i}" for i in range(n)])
    store.save(folder)
    return folder


def test_a_header_claiming_2_31_vectors_is_refused_at_once_in_bounded_memory(
    tmp_path: Path,
) -> None:
    folder = hostile_store(tmp_path / "idx", CLAIM)
    assert (folder / "faiss.index").stat().st_size == 98
    got = load_in_child(folder, cap_mb=512)
    assert got["outcome"] == "MalformedIndexError", got  # was MemoryError: std::bad_alloc
    assert str(CLAIM) in got["message"] and "faiss.index" in got["message"]
    assert got["seconds"] < 5 and got["extra_peak_rss_mb"] < 100


def test_the_length_check_names_the_claim_and_the_real_size(tmp_path: Path) -> None:
    path = tmp_path / "faiss.index"
    path.write_bytes(claimed_index_bytes(CLAIM))
    want = flat_index_size(CLAIM, 1)
    with pytest.raises(
        MalformedIndexError,
        match=rf"{CLAIM} vectors of dimension 1 \({want} bytes\) but has 98 bytes",
    ) as info:
        check_flat_index(path)
    assert isinstance(info.value, UnsafeIndexError) and isinstance(info.value, CorpusIndexError)


def test_a_saved_store_still_loads_and_its_header_checks_out(tmp_path: Path) -> None:
    folder = _saved(tmp_path / "ok")
    assert check_flat_index(folder / "faiss.index", expected_ntotal=3) == (3, 4)
    store = FaissVectorStore.load(folder, DeterministicFakeEmbedding(size=4))
    assert len(store) == 3 and store.similarity_search("text 1", k=1)[0].id == "d1"


@pytest.mark.parametrize("change", ["truncate", "pad"])
def test_a_cut_or_padded_index_is_refused(tmp_path: Path, change: str) -> None:
    folder = _saved(tmp_path / "idx")
    path = folder / "faiss.index"
    data = path.read_bytes()
    path.write_bytes(data[:-8] if change == "truncate" else data + b"\0" * 8)
    with pytest.raises(MalformedIndexError, match="but has"):
        FaissVectorStore.load(folder, DeterministicFakeEmbedding(size=4))


def test_other_index_types_are_not_read(tmp_path: Path) -> None:
    folder = _saved(tmp_path / "idx")
    other = faiss.IndexHNSWFlat(4, 8)
    other.add(np.ones((3, 4), dtype=np.float32))
    faiss.write_index(other, str(folder / "faiss.index"))
    with pytest.raises(MalformedIndexError, match="only b'IxM2' over b'IxFI'"):
        FaissVectorStore.load(folder, DeterministicFakeEmbedding(size=4))


def test_a_dimension_out_of_range_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "faiss.index"
    path.write_bytes(claimed_index_bytes(0, dim=2**31 - 1, payload=8))
    with pytest.raises(MalformedIndexError, match="dimension 2147483647"):
        check_flat_index(path)


def test_counts_that_disagree_with_the_docstore_are_refused(tmp_path: Path) -> None:
    folder = _saved(tmp_path / "idx")
    docs = pd.read_parquet(folder / "docstore.parquet")
    docs.head(2).to_parquet(folder / "docstore.parquet", index=False)
    with pytest.raises(MalformedIndexError, match="holds 3 vectors, its docstore 2"):
        FaissVectorStore.load(folder, DeterministicFakeEmbedding(size=4))


def test_ids_outside_the_docstore_are_refused(tmp_path: Path) -> None:
    folder = _saved(tmp_path / "idx")
    path = folder / "faiss.index"
    data = bytearray(path.read_bytes())
    data[-8:] = struct.pack("<q", 99)  # the last vector's id, now unknown to the docstore
    path.write_bytes(bytes(data))
    with pytest.raises(MalformedIndexError, match="maps ids not in its docstore"):
        FaissVectorStore.load(folder, DeterministicFakeEmbedding(size=4))
