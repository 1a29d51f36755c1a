"""A Qdrant collection as a dense channel's vector store (langchain-qdrant, the [qdrant] extra).

:class:`QdrantVectors` is langchain-qdrant's ``QdrantVectorStore`` (so it works
wherever LangChain takes a vector store) plus :class:`~.vector_index.VectorIndex`.
Point ids are the UUID-5 of the document ids (:func:`~.vector_index.engine_key`);
the payload holds ``doc_id``, ``page_content`` and ``metadata``. The collection
uses cosine distance and is created on the first add, once the dimension is known.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_qdrant import QdrantVectorStore
from qdrant_client import QdrantClient, models

from tablerag_agents.retrieval.vector_index import MAX_STORED_TEXT, VectorIndex, engine_key
from tablerag_agents.retrieval.vectorstore import aligned_inputs, unit_rows

logger = logging.getLogger(__name__)

_BATCH = 256
_DOC_ID = "doc_id"


class QdrantVectors(QdrantVectorStore, VectorIndex):
    """Cosine search over one Qdrant collection; documents keep their own string ids."""

    def __init__(self, client: QdrantClient, collection_name: str, embedding: Embeddings) -> None:
        """Wrap ``collection_name`` on ``client`` (created on the first add if missing)."""
        super().__init__(
            client,
            collection_name,
            embedding,
            validate_embeddings=False,
            validate_collection_config=False,
        )
        self._created = False  # once seen, a collection is not looked up again

    def _exists(self) -> bool:
        if not self._created:
            self._created = bool(self.client.collection_exists(self.collection_name))
        return self._created

    def _create(self, dim: int) -> None:
        self.client.create_collection(
            self.collection_name,
            vectors_config=models.VectorParams(size=dim, distance=models.Distance.COSINE),
        )
        self._created = True
        logger.info("created Qdrant collection %s (dim %d)", self.collection_name, dim)

    def add_embeddings(
        self,
        texts: Sequence[str],
        vectors: Sequence[Sequence[float]] | np.ndarray,
        metadatas: Sequence[dict[str, Any]] | None = None,
        ids: Sequence[str | None] | None = None,
    ) -> list[str]:
        """Upsert texts with precomputed vectors (an existing id is replaced)."""
        if len(texts) == 0:
            return []
        metas, given = aligned_inputs(texts, vectors, metadatas, ids)
        doc_ids = [i or uuid.uuid4().hex for i in given]
        unit = unit_rows(vectors)
        if not self._exists():
            self._create(unit.shape[1])
        for start in range(0, len(texts), _BATCH):
            points = [
                models.PointStruct(
                    id=engine_key(doc_ids[n]),
                    vector=unit[n].tolist(),
                    payload={
                        _DOC_ID: doc_ids[n],
                        self.content_payload_key: texts[n][:MAX_STORED_TEXT],
                        self.metadata_payload_key: dict(metas[n]),
                    },
                )
                for n in range(start, min(start + _BATCH, len(texts)))
            ]
            self.client.upsert(self.collection_name, points=points)
        return doc_ids

    def add_texts(  # type: ignore[override]
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        ids: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Embed and add texts; returns their ids (generated when not given)."""
        texts = list(texts)
        if not texts:
            return []
        vectors = self._require_embeddings("add_texts").embed_documents(texts)
        return self.add_embeddings(texts, vectors, metadatas, ids)

    def vectors(self, ids: Sequence[str]) -> np.ndarray:
        """Return the stored unit vectors of ``ids`` (KeyError for an unknown id)."""
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(ids), 1024):
            chunk = [engine_key(i) for i in ids[start : start + 1024]]
            for point in self.client.retrieve(
                self.collection_name, chunk, with_payload=[_DOC_ID], with_vectors=True
            ):
                vector = point.vector
                assert isinstance(vector, list)
                found[str((point.payload or {}).get(_DOC_ID))] = np.asarray(vector, np.float32)
        missing = [i for i in ids if i not in found]
        if missing:
            raise KeyError(missing[0])
        if not ids:
            return np.zeros((0, 0), dtype=np.float32)
        return unit_rows(np.stack([found[i] for i in ids]))

    def similarity_search_with_score_by_vector(  # type: ignore[override]
        self,
        embedding: Sequence[float] | np.ndarray,
        k: int = 4,
        filter: models.Filter | None = None,
        **kwargs: Any,
    ) -> list[tuple[Document, float]]:
        """Return ``(document, cosine)`` pairs, best first (``filter``: a Qdrant filter)."""
        if k <= 0 or not self._exists():
            return []
        points = self.client.query_points(
            self.collection_name,
            query=unit_rows(embedding)[0].tolist(),
            query_filter=filter,
            limit=k,
            with_payload=True,
            with_vectors=False,
        ).points
        return [(self._to_document(p.payload or {}), float(p.score)) for p in points]

    @classmethod
    def _document_from_point(
        cls,
        scored_point: Any,
        collection_name: str,
        content_payload_key: str,
        metadata_payload_key: str,
    ) -> Document:
        """LangChain's own search methods: documents carry their string ids too."""
        payload = scored_point.payload or {}
        return Document(
            id=payload.get(_DOC_ID),
            page_content=payload.get(content_payload_key, ""),
            metadata=dict(payload.get(metadata_payload_key) or {}),
        )

    def _to_document(self, payload: dict[str, Any]) -> Document:
        return Document(
            id=payload.get(_DOC_ID),
            page_content=payload.get(self.content_payload_key, ""),
            metadata=dict(payload.get(self.metadata_payload_key) or {}),
        )

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:  # type: ignore[override]
        """Delete documents by id (unknown ids are ignored)."""
        if not ids or not self._exists():
            return True
        selector = models.PointIdsList(points=[engine_key(i) for i in ids])
        self.client.delete(self.collection_name, points_selector=selector)
        return True

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:  # type: ignore[override]
        """Return the stored documents for the ids that exist, in the given order."""
        if not ids or not self._exists():
            return []
        points = self.client.retrieve(
            self.collection_name, [engine_key(i) for i in ids], with_payload=True
        )
        by_id = {d.id: d for d in (self._to_document(p.payload or {}) for p in points)}
        return [by_id[i] for i in ids if i in by_id]

    def __len__(self) -> int:
        """Number of stored documents."""
        if not self._exists():
            return 0
        return int(self.client.count(self.collection_name, exact=True).count)

    def documents(self) -> Iterator[Document]:
        """Yield every stored document (scrolled in pages of 1,000)."""
        if not self._exists():
            return
        offset: Any = None
        while True:
            points, offset = self.client.scroll(
                self.collection_name, limit=1000, offset=offset, with_payload=True
            )
            for point in points:
                yield self._to_document(point.payload or {})
            if offset is None:
                return

    def save(self, path: str | Path) -> None:
        """Nothing to write: Qdrant persists every upsert itself."""

    def drop(self) -> None:
        """Delete the whole collection."""
        if self._exists():
            self.client.delete_collection(self.collection_name)
        self._created = False
