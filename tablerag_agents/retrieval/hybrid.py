"""Fusion of several retrievers: reciprocal-rank fusion or weighted score fusion, then re-rank."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Literal

from tablerag_agents.retrieval.base import Doc, Hit, Reranker, Retriever

logger = logging.getLogger(__name__)

Fusion = Literal["rrf", "score"]


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[Hit]],
    *,
    k: float = 60.0,
    weights: Sequence[float] | None = None,
) -> list[Hit]:
    """Fuse ranked lists: ``score(d) = sum_i w_i / (k + rank_i(d))`` with 1-based ranks.

    Args:
        rankings: One best-first hit list per retriever.
        k: The RRF constant; larger values flatten the influence of top ranks.
        weights: One weight per list (default all 1).

    Returns:
        The union of hits, best first; ties keep first-seen order. Text and
        metadata come from the first list that holds the doc.
    """
    weights = list(weights) if weights is not None else [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError(f"{len(weights)} weights for {len(rankings)} rankings")
    fused: dict[str, float] = {}
    first: dict[str, Hit] = {}
    for hits, weight in zip(rankings, weights, strict=True):
        for rank, hit in enumerate(hits, start=1):
            fused[hit.id] = fused.get(hit.id, 0.0) + weight / (k + rank)
            first.setdefault(hit.id, hit)
    order = sorted(fused, key=lambda i: -fused[i])
    return [Hit(i, fused[i], first[i].text, first[i].metadata) for i in order]


def max_normalise(scores: Mapping[str, float]) -> dict[str, float]:
    """Divide scores by their maximum when it is positive (else leave them as they are)."""
    top = max(scores.values(), default=0.0)
    return {i: s / top for i, s in scores.items()} if top > 0 else dict(scores)


def weighted_score_fusion(
    scores: Sequence[Mapping[str, float]], weights: Sequence[float] | None = None
) -> dict[str, float]:
    """Return ``sum_i w_i * s_i(d) / max_d s_i(d)`` per doc; a doc missing from a map adds 0."""
    weights = list(weights) if weights is not None else [1.0] * len(scores)
    if len(weights) != len(scores):
        raise ValueError(f"{len(weights)} weights for {len(scores)} score maps")
    fused: dict[str, float] = {}
    for score_map, weight in zip(scores, weights, strict=True):
        for doc_id, s in max_normalise(score_map).items():
            fused[doc_id] = fused.get(doc_id, 0.0) + weight * s
    return fused


class HybridRetriever(Retriever):
    """Search several retrievers over the same docs and fuse their results.

    ``fusion="rrf"`` fuses ranks (works with any retriever). ``fusion="score"``
    takes the union of every retriever's top ``candidates``, asks each retriever
    to score the whole union (``Retriever.score``), max-normalises per retriever
    and adds the weighted scores. An optional ``reranker`` then re-orders the
    best ``rerank_top``; with ``rerank_weight`` set, its max-normalised score is
    added to the fused score instead of replacing it. Retrievers flagged
    ``generate=False`` only score the others' candidates (for costly scorers
    such as MaxSim).
    """

    name = "hybrid"

    def __init__(
        self,
        retrievers: Sequence[Retriever],
        *,
        weights: Sequence[float] | None = None,
        fusion: Fusion = "rrf",
        rrf_k: float = 60.0,
        candidates: int = 50,
        reranker: Reranker | None = None,
        rerank_top: int = 50,
        rerank_weight: float | None = None,
        generate: Sequence[bool] | None = None,
    ) -> None:
        """Configure the fusion; see the class docstring for the parameters."""
        if not retrievers:
            raise ValueError("HybridRetriever needs at least one retriever")
        if weights is not None and len(weights) != len(retrievers):
            raise ValueError(f"{len(weights)} weights for {len(retrievers)} retrievers")
        if fusion not in ("rrf", "score"):
            raise ValueError(f"unknown fusion {fusion!r}: use 'rrf' or 'score'")
        if generate is not None and len(generate) != len(retrievers):
            raise ValueError(f"{len(generate)} generate flags for {len(retrievers)} retrievers")
        if generate is not None and fusion == "rrf" and not all(generate):
            raise ValueError("score-only retrievers (generate=False) need fusion='score'")
        self.retrievers = list(retrievers)
        self.weights = list(weights) if weights is not None else [1.0] * len(retrievers)
        self.fusion: Fusion = fusion
        self.rrf_k = rrf_k
        self.candidates = candidates
        self.reranker = reranker
        self.rerank_top = rerank_top
        self.rerank_weight = rerank_weight
        self.generate = list(generate) if generate is not None else [True] * len(retrievers)
        if not any(self.generate):
            raise ValueError("at least one retriever must generate candidates")

    def __len__(self) -> int:
        """Number of docs of the first retriever (all hold the same docs)."""
        return len(self.retrievers[0])

    def add(self, docs: Sequence[Doc]) -> None:
        """Add the docs to every retriever."""
        for retriever in self.retrievers:
            retriever.add(docs)

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """Fuse the retrievers' results, optionally re-rank, and return the best ``k``."""
        if k <= 0:
            return []
        depth = max(self.candidates, k, self.rerank_top if self.reranker else 0)
        triples = list(zip(self.retrievers, self.weights, self.generate, strict=True))
        active = [(r, w) for r, w, g in triples if w != 0 and g]
        scorers = [(r, w) for r, w, g in triples if w != 0 and not g]
        rankings = [r.search(query, depth) for r, _ in active]
        if self.fusion == "rrf":
            fused = reciprocal_rank_fusion(rankings, k=self.rrf_k, weights=[w for _, w in active])
        else:
            fused = self._score_fuse(query, active + scorers, rankings + [[] for _ in scorers])
        if self.reranker is not None and fused:
            fused = self._rerank(query, fused)
        return fused[:k]

    def _score_fuse(
        self,
        query: str,
        active: Sequence[tuple[Retriever, float]],
        rankings: Sequence[Sequence[Hit]],
    ) -> list[Hit]:
        first: dict[str, Hit] = {}
        for hits in rankings:
            for hit in hits:
                first.setdefault(hit.id, hit)
        ids = list(first)
        score_maps: list[dict[str, float]] = []
        for (retriever, _), hits in zip(active, rankings, strict=True):
            known = {h.id: h.score for h in hits}
            missing = [i for i in ids if i not in known]
            if missing:
                known.update(zip(missing, retriever.score(query, missing), strict=True))
            score_maps.append(known)
        fused = weighted_score_fusion(score_maps, [w for _, w in active])
        order = sorted(ids, key=lambda i: -fused[i])
        return [Hit(i, fused[i], first[i].text, first[i].metadata) for i in order]

    def _rerank(self, query: str, fused: list[Hit]) -> list[Hit]:
        assert self.reranker is not None
        head, tail = fused[: self.rerank_top], fused[self.rerank_top :]
        reranked = self.reranker.rerank(query, head)
        if self.rerank_weight is None:
            return reranked + tail
        second = max_normalise({h.id: h.score for h in reranked})
        first = max_normalise({h.id: h.score for h in head})
        by_id = {h.id: h for h in head}
        total = {i: first[i] + self.rerank_weight * second.get(i, 0.0) for i in first}
        order = sorted(total, key=lambda i: -total[i])
        return [Hit(i, total[i], by_id[i].text, by_id[i].metadata) for i in order] + tail
