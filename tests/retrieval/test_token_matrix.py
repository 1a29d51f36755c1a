"""The packed MaxSim token matrix: batches kept apart, saved without a full copy, opened mapped."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from tablerag_agents.errors import MalformedIndexError
from tablerag_agents.retrieval import token_matrix
from tablerag_agents.retrieval.base import Doc
from tablerag_agents.retrieval.colbert import ColBERTRetriever
from tablerag_agents.retrieval.token_matrix import TokenMatrix, maxsim_many


def _mats(n: int, seed: int, dim: int = 8) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        m = rng.normal(size=(int(rng.integers(0, 6)), dim)).astype(np.float32)
        out.append(m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9))
    return out


def _filled(batches: list[list[np.ndarray]]) -> TokenMatrix:
    matrix = TokenMatrix()
    for mats in batches:
        matrix.append(mats)
    return matrix


def test_docs_and_scores_match_one_packed_array(monkeypatch) -> None:
    monkeypatch.setattr(token_matrix, "MERGE_ROWS", 20)  # some batches merge, some stay apart
    batches = [_mats(n, seed) for seed, n in enumerate([3, 1, 7, 2, 9, 1])]
    matrix = _filled(batches)
    mats = [m for b in batches for m in b]
    assert 1 < len(matrix._arrays) < len(batches)
    assert len(matrix) == len(mats) and matrix.n_tokens == sum(len(m) for m in mats)
    for n, m in enumerate(mats):
        assert np.array_equal(matrix.doc(n), m.astype(np.float16))
    packed = np.concatenate([m.astype(np.float16) for m in mats])
    query = _mats(1, 99)[0][:3]
    expected = maxsim_many(query, packed, matrix.offsets)
    assert np.array_equal(matrix.maxsim_all(query), expected)  # to the bit
    assert matrix._float32 is not None
    monkeypatch.setattr(token_matrix, "FLOAT32_CACHE_BYTES", 0)  # too big to keep in float32
    matrix._float32 = None
    assert np.array_equal(matrix.maxsim_all(query), expected) and matrix._float32 is None
    assert np.array_equal(matrix.rows(3, 11), packed[3:11].astype(np.float32))


def test_colbert_scores_candidates_exactly_as_one_by_one(token_encoder) -> None:
    """Bitwise: a synthetic copy of a gold table must tie with it, as it did before."""
    mats = _mats(40, 5, dim=32)
    mats[17] = mats[3].copy()  # two identical docs
    retriever = ColBERTRetriever(token_encoder)
    retriever.add_with_tokens([Doc(f"d{n}", "") for n in range(20)], mats[:20])
    retriever.add_with_tokens([Doc(f"d{n}", "") for n in range(20, 40)], mats[20:])
    query = _mats(1, 8, dim=32)[0][:5]
    retriever.encoder = lambda texts: [query]  # type: ignore[assignment]
    ids = [f"d{n}" for n in (31, 3, 0, 17, 25, 17, 9)]
    expected = [
        float((query @ mats[int(i[1:])].astype(np.float16).astype(np.float32).T).max(1).sum())
        if len(mats[int(i[1:])])
        else 0.0
        for i in ids
    ]
    scores = retriever.score("q", ids)
    assert scores == expected  # exact
    assert scores[1] == scores[3]


def test_save_writes_the_packed_array_without_copying_it(tmp_path, token_encoder) -> None:
    """Saving concatenated every doc's matrix first: twice the matrix (4 GB at 100k tables)."""
    batches = [_mats(400, seed, dim=64) for seed in range(6)]
    retriever = ColBERTRetriever(token_encoder)
    for seed, mats in enumerate(batches):
        retriever.add_with_tokens([Doc(f"{seed}-{n}", "") for n in range(len(mats))], mats)
    packed = np.concatenate([m.astype(np.float16) for b in batches for m in b])
    retriever.save(tmp_path / "warm")  # imports the Parquet writer outside the measure
    tracemalloc.start()
    try:
        retriever.save(tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < packed.nbytes / 2, f"save allocated {peak} B for a {packed.nbytes} B matrix"
    assert np.array_equal(np.load(tmp_path / "tokens.npy"), packed)
    assert np.array_equal(np.load(tmp_path / "offsets.npy"), retriever._matrix.offsets)


def test_a_loaded_matrix_is_mapped_and_can_be_saved_over_itself(tmp_path) -> None:
    mats = _mats(30, 1)
    matrix = _filled([mats])
    matrix.save(tmp_path)
    loaded = TokenMatrix.load(tmp_path, 30)
    assert isinstance(loaded._arrays[0], np.memmap)
    loaded.append(_mats(2, 2))
    loaded.save(tmp_path)  # written beside the mapped file, then renamed over it
    again = TokenMatrix.load(tmp_path, 32)
    for n, m in enumerate(mats):
        assert np.array_equal(again.doc(n), m.astype(np.float16))
        assert np.array_equal(loaded.doc(n), m.astype(np.float16))  # the old mapping still reads


@pytest.mark.parametrize("damage", ["offsets", "count", "truncated", "ints", "no_columns"])
def test_malformed_token_files_are_refused(tmp_path, damage) -> None:
    _filled([_mats(5, 3)]).save(tmp_path)
    n_docs = 5
    if damage == "offsets":
        np.save(tmp_path / "offsets.npy", np.array([0, 3, 2, 9, 9, 9]))
    elif damage == "count":
        n_docs = 6
    elif damage == "truncated":
        data = (tmp_path / "tokens.npy").read_bytes()
        (tmp_path / "tokens.npy").write_bytes(data[: len(data) - 16])
    elif damage == "ints":
        np.save(tmp_path / "tokens.npy", np.zeros((9, 8), dtype=np.int64))
    else:  # claims 10**12 rows of no columns: no bytes on disk, a huge score array in a search
        with (tmp_path / "tokens.npy").open("wb") as fh:
            header = {"descr": "<f2", "fortran_order": False, "shape": (10**12, 0)}
            np.lib.format.write_array_header_1_0(fh, header)
        offsets = np.zeros(n_docs + 1, dtype=np.int64)
        offsets[-1] = 10**12
        np.save(tmp_path / "offsets.npy", offsets)
    with pytest.raises(MalformedIndexError):
        TokenMatrix.load(tmp_path, n_docs)


def test_colbert_retriever_round_trip_and_delete(tmp_path, token_encoder, corpus) -> None:
    retriever = ColBERTRetriever(token_encoder)
    retriever.add(corpus[:3])
    retriever.add(corpus[3:])
    query = "capital of Germany"
    before = [(h.id, round(h.score, 4)) for h in retriever.search(query, k=5)]
    retriever.save(tmp_path)
    loaded = ColBERTRetriever.load(tmp_path, token_encoder)
    assert [(h.id, round(h.score, 4)) for h in loaded.search(query, k=5)] == before
    assert loaded.score(query, ["berlin"]) == pytest.approx(retriever.score(query, ["berlin"]))
    loaded.delete(["berlin"])
    loaded.add([Doc("bonn", "Bonn was the capital of West Germany")])
    assert [h.id for h in loaded.search(query, k=5)][0] == "bonn"
