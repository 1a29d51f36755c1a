"""Listwise LLM re-ranking of candidate tables (the re-rank step of de Souza et al.'s TableRAG).

The model sees the question and numbered short table descriptions and replies
with table numbers, best first. Parsing is lenient (any integers in range, in
order of appearance); a malformed reply never drops a candidate.

A small model's pick is often worse than a good first stage, so by default the
pick is *fused* with the first-stage scores (:func:`fuse_llm_ranking`, weight
:data:`DEFAULT_RERANK_WEIGHT`): it only breaks near-ties. ``weight=None`` gives
pure listwise re-ranking, for strong models. Measured on OTT-QA with the
embedded 1.5B model (``bench/retrieval_ottqa.py --rerank-sample 100``): no
weight improved on hybrid retrieval; 0.2 cost 0.01 HITS@1, listwise 0.39.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage

from tablerag_agents.prompts import load_prompt
from tablerag_agents.retrieval.base import Hit, Reranker

logger = logging.getLogger(__name__)

_INT = re.compile(r"\d+")

DEFAULT_RERANK_WEIGHT: float | None = 0.2
"""Fusion weight of the LLM's pick: it overtakes candidates within 20% of the score range."""


class _Candidate(Protocol):
    """A frozen dataclass hit with ``score``, ``text`` and ``metadata`` (Hit, TableHit)."""

    @property
    def score(self) -> float: ...  # noqa: D102

    @property
    def text(self) -> str: ...  # noqa: D102

    @property
    def metadata(self) -> dict[str, Any]: ...  # noqa: D102


H = TypeVar("H", bound=_Candidate)


def _shorten(text: str, max_chars: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= max_chars else flat[: max_chars - 3].rstrip() + "..."


def format_rerank_prompt(
    question: str, texts: Sequence[str], *, max_chars: int = 240, template: str | None = None
) -> str:
    """Fill the ``rerank_tables`` prompt with the question and numbered table texts."""
    template = template if template is not None else load_prompt("rerank_tables")
    listing = "\n".join(f"[{n}] {_shorten(t, max_chars)}" for n, t in enumerate(texts, start=1))
    return template.format(question=question, tables=listing)


def parse_ranking(reply: str, n: int) -> list[int]:
    """Return the 0-based candidate positions the reply names, in order, without repeats.

    Integers outside ``1..n`` (years, counts) are ignored.
    """
    order: list[int] = []
    for match in _INT.finditer(reply):
        value = int(match.group())
        if 1 <= value <= n and value - 1 not in order:
            order.append(value - 1)
    return order


def ask_llm_ranking(
    model: BaseChatModel,
    question: str,
    texts: Sequence[str],
    *,
    max_chars: int = 240,
    template: str | None = None,
) -> list[int]:
    """Ask ``model`` which of ``texts`` answer ``question``; return the positions it names.

    Only the named positions come back, best first (often just one); an
    unparseable reply, or fewer than two texts (nothing to ask), gives ``[]``.
    Model errors are not swallowed.
    """
    if len(texts) <= 1:
        return []
    prompt = format_rerank_prompt(question, texts, max_chars=max_chars, template=template)
    reply = model.invoke([HumanMessage(content=prompt)])
    content = reply.content if isinstance(reply.content, str) else str(reply.content)
    named = parse_ranking(content, len(texts))
    if not named:
        logger.warning("LLM re-rank reply had no table number; keeping the order: %.120r", content)
    return named


def fuse_llm_ranking(
    scores: Sequence[float], named: Sequence[int], weight: float | None
) -> list[int]:
    """Combine first-stage ``scores`` with the positions the LLM ``named``; return an order.

    ``weight=None`` is pure listwise re-ranking (the named positions first, the
    rest in first-stage order). Otherwise each candidate scores its min-max
    normalised first-stage score (best = 1) plus ``weight / (1 + r)`` if the
    LLM named it at rank ``r``: the LLM's pick overtakes the first-stage best
    only when its score is within ``weight`` of it (ties keep first-stage order).
    """
    n = len(scores)
    if weight is None:
        return list(named) + [i for i in range(n) if i not in named]
    lo, hi = (min(scores), max(scores)) if n else (0.0, 0.0)
    span = hi - lo
    bonus = {i: weight / (1 + r) for r, i in enumerate(named)}
    fused = [
        ((s - lo) / span if span > 0 else 1.0) + bonus.get(i, 0.0) for i, s in enumerate(scores)
    ]
    return sorted(range(n), key=lambda i: -fused[i])


def rerank_with_llm(
    model: BaseChatModel,
    question: str,
    candidates: Sequence[H],
    *,
    top_n: int = 10,
    weight: float | None = DEFAULT_RERANK_WEIGHT,
    max_chars: int = 240,
    template: str | None = None,
) -> list[H]:
    """Re-order the first ``top_n`` candidates with the LLM; the rest follow unchanged.

    ``candidates`` are :class:`Hit` or ``TableHit`` objects (anything dataclass-like
    with ``score``, ``text`` and ``metadata``); the same type comes back.
    ``weight`` fuses the LLM's pick with the first-stage scores (see
    :func:`fuse_llm_ranking`); ``None`` lets the LLM's order win outright.

    Re-ranked hits get ``score = top_n - position`` (above every hit left out)
    and keep their first-stage score in ``metadata["first_stage_score"]``.
    """
    head, tail = list(candidates[:top_n]), list(candidates[top_n:])
    named = ask_llm_ranking(
        model, question, [h.text for h in head], max_chars=max_chars, template=template
    )
    order = fuse_llm_ranking([h.score for h in head], named, weight)
    tail_top = max((h.score for h in tail), default=0.0)
    out = []
    for pos, i in enumerate(order):
        hit = head[i]
        meta = {**hit.metadata, "first_stage_score": hit.score}
        if i in named:
            meta["llm_rank"] = named.index(i) + 1
        new_score = tail_top + float(len(order) - pos)
        out.append(dataclasses.replace(hit, score=new_score, metadata=meta))  # type: ignore[type-var]
    return out + tail


class LLMReranker(Reranker):
    """A :class:`Reranker` that asks a chat model to order the candidates."""

    name = "llm"

    def __init__(
        self,
        model: BaseChatModel,
        *,
        top_n: int = 10,
        weight: float | None = DEFAULT_RERANK_WEIGHT,
        max_chars: int = 240,
    ) -> None:
        """Re-rank the best ``top_n`` hits, each shown in at most ``max_chars`` characters.

        ``weight`` fuses the model's pick with the first-stage scores
        (:func:`fuse_llm_ranking`); ``None`` means the model's order wins.
        """
        self.model = model
        self.top_n = top_n
        self.weight = weight
        self.max_chars = max_chars

    def rerank(self, query: str, hits: Sequence[Hit], k: int | None = None) -> list[Hit]:
        """Return the hits with the first ``top_n`` re-ordered by the model."""
        out = rerank_with_llm(
            self.model,
            query,
            hits,
            top_n=self.top_n,
            weight=self.weight,
            max_chars=self.max_chars,
        )
        return out if k is None else out[:k]
