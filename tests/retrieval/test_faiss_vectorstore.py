"""FaissVectorStore: LangChain's standard VectorStore suite plus our persistence."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.vectorstores import VectorStore
from langchain_tests.integration_tests import VectorStoreIntegrationTests

from tablerag_agents.errors import IndexNotFoundError
from tablerag_agents.retrieval.dense import DenseRetriever
from tablerag_agents.retrieval.vectorstore import FaissVectorStore


class TestFaissVectorStoreStandard(VectorStoreIntegrationTests):
    """The langchain-tests VectorStore suite (add, upsert, get_by_ids, delete, search)."""

    @pytest.fixture
    def vectorstore(self) -> Generator[VectorStore, None, None]:  # type: ignore[override]
        yield FaissVectorStore(self.get_embeddings())


def _store() -> FaissVectorStore:
    store = FaissVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_texts(
        ["alpha", "beta", "gamma"],
        [{"n": 1}, {"n": 2}, {"n": 3}],
        ids=["a", "b", "c"],
    )
    return store


def test_similarity_search_with_score_and_filter():
    store = _store()
    pairs = store.similarity_search_with_score("beta", k=3)
    assert [d.id for d, _ in pairs][0] == "b"
    assert pairs[0][1] == pytest.approx(1.0, abs=1e-5)
    assert all(-1.0 - 1e-6 <= s <= 1.0 + 1e-6 for _, s in pairs)
    filtered = store.similarity_search("beta", k=3, filter={"n": 3})
    assert [d.id for d in filtered] == ["c"]
    assert store.similarity_search("beta", k=3, filter=lambda m: m["n"] > 1)[0].id == "b"
    rel = store.similarity_search_with_relevance_scores("beta", k=1)
    assert rel[0][1] == pytest.approx(1.0, abs=1e-5)


def test_delete_then_search():
    store = _store()
    assert store.delete(["b", "missing"]) is True
    assert len(store) == 2
    assert "b" not in [d.id for d in store.similarity_search("beta", k=5)]
    assert store.get_by_ids(["a", "b"]) == [
        Document(page_content="alpha", metadata={"n": 1}, id="a")
    ]


def test_save_load_round_trip_without_pickle(tmp_path: Path):
    store = _store()
    store.save(tmp_path / "vs")
    files = sorted(p.name for p in (tmp_path / "vs").iterdir())
    assert files == ["docstore.parquet", "faiss.index"]
    for path in (tmp_path / "vs").iterdir():
        assert not path.read_bytes().startswith(b"\x80"), f"{path.name} looks like a pickle"
    loaded = FaissVectorStore.load(tmp_path / "vs", DeterministicFakeEmbedding(size=16))
    for query in ("alpha", "gamma", "delta"):
        assert loaded.similarity_search_with_score(
            query, k=3
        ) == store.similarity_search_with_score(query, k=3)
    loaded.add_texts(["delta"], ids=["d"])
    assert loaded.similarity_search("delta", k=1)[0].id == "d"


def test_load_missing_dir_raises(tmp_path: Path):
    with pytest.raises(IndexNotFoundError):
        FaissVectorStore.load(tmp_path / "nope", DeterministicFakeEmbedding(size=16))


def test_dense_retriever_over_foreign_vectorstore(corpus, bow):
    """Any VectorStore works behind DenseRetriever (here LangChain's in-memory one)."""
    from langchain_core.vectorstores import InMemoryVectorStore

    retriever = DenseRetriever(vectorstore=InMemoryVectorStore(bow))
    retriever.add(corpus)
    hits = retriever.search("capital of germany", k=2)
    assert hits[0].id == "berlin"
    assert 0.0 <= hits[1].score <= hits[0].score <= 1.0
    assert (
        retriever.score("capital of germany", ["berlin"])[0]
        > retriever.score("capital of germany", ["piano"])[0]
    )


def test_blas_search_of_a_large_store_matches_faiss(monkeypatch) -> None:
    """Above the size threshold one query is scored by BLAS: same docs, same order as FAISS."""
    import numpy as np

    from tablerag_agents.retrieval import vectorstore

    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((300, 24)).astype(np.float32)
    vectors[7] = vectors[3]  # an exact tie: FAISS puts the later stored vector first
    store = FaissVectorStore(DeterministicFakeEmbedding(size=24))
    store.add_embeddings([f"t{i}" for i in range(300)], vectors, ids=[f"d{i}" for i in range(300)])
    store.delete(["d0", "d150"])  # storage positions shift; labels must follow
    queries = [vectors[3], *rng.standard_normal((20, 24)).astype(np.float32)]

    def ranked(threshold: int) -> list[list[tuple[str | None, float]]]:
        monkeypatch.setattr(vectorstore, "BLAS_SEARCH_MIN_VECTORS", threshold)
        return [
            [(d.id, s) for d, s in store.similarity_search_with_score_by_vector(q, k=12)]
            for q in queries
        ]

    calls: list[int] = []
    monkeypatch.setattr(vectorstore, "flat_top_k", _counting(vectorstore.flat_top_k, calls))
    by_faiss, by_blas = ranked(10**9), ranked(1)
    assert len(calls) == len(queries)  # the BLAS path ran, once per query
    assert [[i for i, _ in r] for r in by_blas] == [[i for i, _ in r] for r in by_faiss]
    assert [i for i, _ in by_blas[0][:2]] == ["d7", "d3"]
    assert by_blas[0][0][1] == by_blas[0][1][1]
    for blas, faiss_ in zip(by_blas, by_faiss, strict=True):
        assert [s for _, s in blas] == pytest.approx([s for _, s in faiss_], abs=1e-5)


def _counting(fn, calls: list):  # type: ignore[no-untyped-def]
    def wrapped(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return fn(*args, **kwargs)

    return wrapped
