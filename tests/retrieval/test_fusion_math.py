"""Reciprocal-rank fusion, score fusion and MaxSim on hand-computable inputs."""

from __future__ import annotations

import numpy as np
import pytest

from tablerag_agents.retrieval.base import Hit, Reranker
from tablerag_agents.retrieval.bm25 import BM25Retriever
from tablerag_agents.retrieval.colbert import MaxSimReranker, maxsim
from tablerag_agents.retrieval.dense import DenseRetriever
from tablerag_agents.retrieval.hybrid import (
    HybridRetriever,
    reciprocal_rank_fusion,
    weighted_score_fusion,
)
from tablerag_agents.retrieval.token_matrix import maxsim_many


def _hits(*ids: str) -> list[Hit]:
    return [Hit(i, 1.0 / (n + 1), f"text {i}") for n, i in enumerate(ids)]


def test_rrf_scores_by_hand():
    fused = reciprocal_rank_fusion([_hits("a", "b", "c"), _hits("b", "d")], k=10)
    scores = {h.id: h.score for h in fused}
    assert scores["a"] == pytest.approx(1 / 11)
    assert scores["b"] == pytest.approx(1 / 12 + 1 / 11)
    assert scores["c"] == pytest.approx(1 / 13)
    assert scores["d"] == pytest.approx(1 / 12)
    assert [h.id for h in fused] == ["b", "a", "d", "c"]
    assert fused[0].text == "text b"


def test_rrf_weights_change_the_winner():
    fused = reciprocal_rank_fusion([_hits("a", "b"), _hits("b", "a")], k=1, weights=[3.0, 1.0])
    assert [h.id for h in fused] == ["a", "b"]
    assert fused[0].score == pytest.approx(3 / 2 + 1 / 3)
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([_hits("a")], weights=[1.0, 2.0])


def test_weighted_score_fusion_by_hand():
    fused = weighted_score_fusion([{"a": 4.0, "b": 2.0}, {"a": 0.5, "c": 1.0}], [1.0, 2.0])
    assert fused == pytest.approx({"a": 1.0 + 2 * 0.5, "b": 0.5, "c": 2.0})


def test_maxsim_by_hand():
    q = np.array([[1.0, 0.0], [0.0, 1.0]])
    d = np.array([[0.6, 0.8], [1.0, 0.0]])
    # token 1 best matches d[1] (1.0); token 2 best matches d[0] (0.8)
    assert maxsim(q, d) == pytest.approx(1.8)
    assert maxsim(q, np.zeros((0, 2))) == 0.0
    tokens = np.concatenate([d, np.array([[0.0, -1.0]])])
    offsets = np.array([0, 2, 2, 3])  # doc 1 is empty
    assert maxsim_many(q, tokens, offsets) == pytest.approx([1.8, 0.0, 0.0 + -1.0])


def test_maxsim_reranker_orders_by_shared_words(token_encoder):
    hits = [Hit("x", 9.0, "volcano island"), Hit("y", 1.0, "capital city of france")]
    out = MaxSimReranker(token_encoder).rerank("capital of france", hits)
    assert [h.id for h in out] == ["y", "x"]
    assert out[0].score == pytest.approx(3.0, abs=1e-6)


def test_hybrid_rrf_and_score_fusion(corpus, bow):
    for fusion in ("rrf", "score"):
        hybrid = HybridRetriever([BM25Retriever(), DenseRetriever(bow)], fusion=fusion)
        hybrid.add(corpus)
        assert len(hybrid) == 5
        hits = hybrid.search("capital of germany river", k=3)
        assert hits[0].id == "berlin"
        assert len(hits) == 3


def test_hybrid_score_fusion_equals_manual_sum(corpus, bow):
    bm25, dense = BM25Retriever(), DenseRetriever(bow)
    hybrid = HybridRetriever([bm25, dense], fusion="score", weights=[1.0, 0.5])
    hybrid.add(corpus)
    query = "capital city"
    hits = hybrid.search(query, k=5)
    ids = [h.id for h in hits]
    b = dict(zip(ids, bm25.score(query, ids), strict=True))
    d = dict(zip(ids, dense.score(query, ids), strict=True))
    expected = {i: b[i] / max(b.values()) + 0.5 * d[i] / max(d.values()) for i in ids}
    assert {h.id: h.score for h in hits} == pytest.approx(expected, abs=1e-5)


class _Reverse(Reranker):
    def rerank(self, query, hits, k=None):
        return [Hit(h.id, float(n), h.text) for n, h in enumerate(hits)][::-1]


def test_hybrid_reranker_replaces_or_adds(corpus, bow):
    base = HybridRetriever([BM25Retriever()], candidates=5)
    base.add(corpus)
    first = [h.id for h in base.search("capital of france", k=5)]
    hybrid = HybridRetriever([BM25Retriever()], reranker=_Reverse(), rerank_top=2)
    hybrid.add(corpus)
    assert [h.id for h in hybrid.search("capital of france", k=2)] == first[:2][::-1]
    with pytest.raises(ValueError):
        HybridRetriever([BM25Retriever()], weights=[1.0, 1.0])


def test_score_only_retriever_rescores_but_adds_no_candidates(corpus, bow, token_encoder):
    from tablerag_agents.retrieval.colbert import ColBERTRetriever

    bm25, colbert = BM25Retriever(), ColBERTRetriever(token_encoder)
    hybrid = HybridRetriever(
        [bm25, colbert], fusion="score", weights=[1.0, 1.0], generate=[True, False]
    )
    hybrid.add(corpus)
    hits = hybrid.search("Spree", k=5)
    assert [h.id for h in hits] == ["berlin"]  # BM25 finds only berlin; colbert adds none
    assert hits[0].score == pytest.approx(2.0)
    with pytest.raises(ValueError):
        HybridRetriever([bm25], generate=[False], fusion="score")
    with pytest.raises(ValueError):
        HybridRetriever([bm25, colbert], generate=[True, False], fusion="rrf")
