"""BM25, dense and ColBERT-style retrievers on a tiny real corpus."""

from __future__ import annotations

import numpy as np
import pytest

from tablerag_agents.retrieval.bm25 import BM25Retriever
from tablerag_agents.retrieval.colbert import ColBERTRetriever
from tablerag_agents.retrieval.dense import DenseRetriever
from tablerag_agents.retrieval.tokenize import Tokenizer


@pytest.fixture(params=["bm25", "dense", "colbert"])
def make(request, bow, token_encoder):
    def factory():
        if request.param == "bm25":
            return BM25Retriever()
        if request.param == "dense":
            return DenseRetriever(bow)
        return ColBERTRetriever(token_encoder)

    return factory


QUERIES = {
    "what is the capital of germany": "berlin",
    "active volcano in sicily": "volcano",
    "world record marathon runners": "marathon",
    "keyboard instrument with strings": "piano",
    "largest city of france": "paris",
}


def test_each_query_ranks_its_doc_first(make, corpus):
    retriever = make()
    retriever.add(corpus)
    assert len(retriever) == 5
    for query, expected in QUERIES.items():
        hits = retriever.search(query, k=3)
        assert hits[0].id == expected, (query, [h.id for h in hits])
        assert hits[0].score >= hits[-1].score


def test_hits_carry_text_and_metadata(make, corpus):
    retriever = make()
    retriever.add(corpus)
    hit = retriever.search("etna volcano", k=1)[0]
    assert hit.id == "volcano"
    assert hit.text == corpus[3].text
    assert hit.metadata == {"lang": "it"}


def test_empty_index_returns_nothing(make):
    retriever = make()
    assert len(retriever) == 0
    assert retriever.search("anything", k=5) == []


def test_k_larger_than_corpus(make, corpus):
    retriever = make()
    retriever.add(corpus[:2])
    hits = retriever.search("capital", k=50)
    assert {h.id for h in hits} == {"paris", "berlin"}


def test_score_matches_search(make, corpus):
    retriever = make()
    retriever.add(corpus)
    hits = retriever.search("capital of france", k=5)
    rescored = retriever.score("capital of france", [h.id for h in hits])
    assert rescored == pytest.approx([h.score for h in hits], rel=1e-3, abs=1e-3)


def test_incremental_add_and_search_many(make, corpus):
    retriever = make()
    retriever.add(corpus[:3])
    assert "volcano" not in [h.id for h in retriever.search("volcano sicily", k=3)]
    retriever.add(corpus[3:])
    results = retriever.search_many(["volcano sicily", "piano hammers"], k=1)
    assert [r[0].id for r in results] == ["volcano", "piano"]


def test_bm25_rejects_duplicate_ids(corpus):
    retriever = BM25Retriever()
    retriever.add(corpus)
    with pytest.raises(ValueError, match="duplicate"):
        retriever.add(corpus[:1])


def test_bm25_drops_non_matching_docs(corpus):
    retriever = BM25Retriever()
    retriever.add(corpus)
    assert [h.id for h in retriever.search("Spree river", k=5)] == ["berlin"]
    assert retriever.search("zzzz qqqq", k=5) == []


def test_tokenizer_lowercases_stems_and_drops_stopwords():
    tok = Tokenizer()
    assert tok("The Runners are RUNNING in Zürich!") == ["runner", "run", "zürich"]
    assert Tokenizer(stopwords=False, stem=None)("The cats") == ["the", "cats"]
    assert tok.params() == {"stopwords": True, "stem": "english"}


def test_dense_scores_are_cosines(bow, corpus):
    retriever = DenseRetriever(bow)
    retriever.add(corpus)
    hit = retriever.search(corpus[1].text, k=1)[0]
    assert hit.id == "berlin"
    assert hit.score == pytest.approx(1.0, abs=1e-5)
    q = np.asarray(bow.embed_query("river"))
    d = np.asarray(bow.embed_documents([corpus[1].text])[0])
    expected = float(q @ d / np.linalg.norm(q) / np.linalg.norm(d))
    assert retriever.score("river", ["berlin"])[0] == pytest.approx(expected, abs=1e-5)


def test_as_langchain_retriever(corpus):
    retriever = BM25Retriever()
    retriever.add(corpus)
    docs = retriever.as_langchain_retriever(k=2).invoke("capital of germany")
    assert docs[0].id == "berlin"
    assert docs[0].page_content == corpus[1].text
    assert docs[0].metadata["lang"] == "de"
    assert docs[0].metadata["score"] > 0
    assert len(docs) == 2


def test_bm25_add_after_load_tokenizes_only_new_docs(corpus, tmp_path, monkeypatch):
    retriever = BM25Retriever()
    retriever.add(corpus[:4])
    retriever.save(tmp_path / "bm25")
    loaded = BM25Retriever.load(tmp_path / "bm25")
    seen: list[str] = []
    original = loaded.tokenizer

    def counting(text: str) -> list[str]:
        seen.append(text)
        return original(text)

    monkeypatch.setattr(loaded, "tokenizer", counting)
    loaded.add(corpus[4:])
    assert seen == [corpus[4].text]  # the saved token ids were reused
    fresh = BM25Retriever()
    fresh.add(corpus)
    for query in ("piano strings", "capital of france", "volcano"):
        assert loaded.search(query, k=5) == fresh.search(query, k=5)
