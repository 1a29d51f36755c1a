"""One retriever interface for dense, BM25, late-interaction and hybrid search."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.retrievers import BaseRetriever


@dataclass(frozen=True)
class Doc:
    """A searchable text with a caller-chosen id.

    Attributes:
        id: Unique id within one retriever (table id, "column=value"...).
        text: What is matched against queries.
        metadata: Carried through to hits untouched (JSON-serialisable).
    """

    id: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Hit:
    """One search result; higher ``score`` is better within one retriever."""

    id: str
    score: float
    text: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


class Retriever(ABC):
    """Index docs, then return the top-k hits for a query."""

    #: Short name used in reports and index keys ("bm25", "dense", ...).
    name: str = "retriever"

    @abstractmethod
    def add(self, docs: Sequence[Doc]) -> None:
        """Add docs to the index (ids must be new)."""

    @abstractmethod
    def search(self, query: str, k: int = 10) -> list[Hit]:
        """Return up to ``k`` hits for ``query``, best first."""

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        """Search several queries (subclasses batch this when they can)."""
        return [self.search(q, k) for q in queries]

    def delete(self, ids: Sequence[str]) -> None:
        """Remove docs by id (unknown ids are ignored); nothing else is re-indexed.

        Retrievers that cannot delete raise ``NotImplementedError``.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot delete docs")

    def subset(self, ids: Sequence[str]) -> Retriever:
        """Return a new in-memory retriever over the docs ``ids`` only, without re-embedding.

        Retrievers that cannot copy their docs raise ``NotImplementedError``.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot copy a subset")

    def score(self, query: str, ids: Sequence[str]) -> list[float]:
        """Score given docs for ``query`` (same scale as ``search``).

        Used by score fusion to rate candidates another retriever found.
        Retrievers that cannot score arbitrary docs raise ``NotImplementedError``.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot score arbitrary docs")

    def as_langchain_retriever(self, k: int = 4) -> BaseRetriever:
        """Wrap this retriever as a LangChain ``BaseRetriever`` returning ``k`` documents."""
        from tablerag_agents.retrieval.adapters import LangChainRetriever

        return LangChainRetriever(retriever=self, k=k)

    @abstractmethod
    def __len__(self) -> int:
        """Number of indexed docs."""


class Reranker(ABC):
    """Re-order candidate hits for a query (second stage after a retriever)."""

    #: Short name used in reports ("maxsim", "llm", ...).
    name: str = "reranker"

    @abstractmethod
    def rerank(self, query: str, hits: Sequence[Hit], k: int | None = None) -> list[Hit]:
        """Return the hits re-scored, best first; ``k`` truncates (None keeps all)."""
