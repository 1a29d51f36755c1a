"""What the corpus channels need from a vector store, beyond LangChain's ``VectorStore``.

A dense channel embeds its documents in batches itself (one progress bar,
shared with the other channels), scores another channel's candidates by id, and
deletes a table's documents when the table goes. :class:`VectorIndex` is that
contract; :class:`~.vectorstore.FaissVectorStore` (the embedded default) and the
Qdrant and Milvus stores implement it, so :class:`~.dense.DenseRetriever` treats
them alike. Any other LangChain ``VectorStore`` still works through its generic
methods (slower: it re-embeds candidates to score them).

Scores are cosine similarities of unit vectors in every implementation, so the
fused hybrid scores do not depend on the engine.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.vectorstores import VectorStore

_KEY_NAMESPACE = uuid.UUID("6f1b7a52-3c0e-4d7e-9a51-2b8f0c4e7d19")

#: Longest document text an engine stores (search uses the vector; the full text
#: stays in the index folder). Milvus caps a VARCHAR at 65,535 bytes.
MAX_STORED_TEXT = 8192
#: Longest document id an engine accepts (UTF-8 bytes, under Milvus's VARCHAR cap).
MAX_DOC_ID_BYTES = 16_384


def engine_key(doc_id: str) -> str:
    """Return the engine's primary key for a document id (a UUID string).

    Engines restrict their keys (Qdrant takes UUIDs or integers) or build filter
    expressions from them (Milvus), so a table id such as ``a"] or pk != "x`` is
    never sent as a key: its UUID-5 is, and the id travels as a payload field.
    """
    if len(doc_id.encode("utf-8")) > MAX_DOC_ID_BYTES:
        raise ValueError(f"document id of {len(doc_id)} characters is longer than allowed")
    return str(uuid.uuid5(_KEY_NAMESPACE, doc_id))


class VectorIndex(VectorStore, ABC):
    """A LangChain ``VectorStore`` the corpus channels can fill, score by id and prune.

    Ids are the caller's document ids (any string).
    """

    @abstractmethod
    def add_embeddings(
        self,
        texts: Sequence[str],
        vectors: Sequence[Sequence[float]] | np.ndarray,
        metadatas: Sequence[dict[str, Any]] | None = None,
        ids: Sequence[str | None] | None = None,
    ) -> list[str]:
        """Add texts with precomputed vectors; an existing id is replaced."""

    @abstractmethod
    def vectors(self, ids: Sequence[str]) -> np.ndarray:
        """Return the stored unit vectors of ``ids`` (KeyError for an unknown id)."""

    @abstractmethod
    def similarity_search_with_score_by_vector(
        self, embedding: Sequence[float] | np.ndarray, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """Return ``(document, cosine)`` pairs, best first; documents carry their id."""

    @abstractmethod
    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Delete documents by id (unknown ids are ignored)."""

    @abstractmethod
    def __len__(self) -> int:
        """Number of stored documents."""

    @abstractmethod
    def documents(self) -> Iterator[Document]:
        """Yield every stored document (with its id and metadata, without vectors)."""

    @abstractmethod
    def save(self, path: str | Path) -> None:
        """Make the stored documents durable (FAISS writes files under ``path``)."""

    def close(self) -> None:  # noqa: B027 - most stores hold nothing to release
        """Release what the store holds open (its engine connection is closed elsewhere)."""
