"""A Milvus collection as a dense channel's vector store (langchain-milvus, the [milvus] extra).

:class:`MilvusVectors` is langchain-milvus's ``Milvus`` store plus
:class:`~.vector_index.VectorIndex`. The URI is a Milvus server
(``http://host:19530``) or a local Milvus Lite file (``vectors.db``). The
collection is created on the first add with a fixed schema: ``pk`` (the UUID-5
of the document id, see :func:`~.vector_index.engine_key`; ids are never
written into a filter expression), ``doc_id``, ``text``, ``metadata`` (JSON)
and ``vector`` (cosine; a FLAT index on Milvus Lite, AUTOINDEX on a server).
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
from langchain_milvus import Milvus
from pymilvus import DataType

from tablerag_agents.retrieval.vector_index import MAX_STORED_TEXT, VectorIndex, engine_key
from tablerag_agents.retrieval.vectorstore import aligned_inputs, unit_rows

logger = logging.getLogger(__name__)

_BATCH = 256
_VARCHAR_MAX = 65_535
_OUT = ["doc_id", "text", "metadata"]


class MilvusVectors(Milvus, VectorIndex):
    """Cosine search over one Milvus collection; documents keep their own string ids."""

    def __init__(
        self,
        uri: str,
        collection_name: str,
        embedding: Embeddings,
        *,
        token: str | None = None,
        index_type: str = "FLAT",
    ) -> None:
        """Connect to ``uri`` and wrap ``collection_name`` (created on the first add)."""
        connection: dict[str, Any] = {"uri": uri}
        if token:
            connection["token"] = token
        self._index_type = index_type
        super().__init__(
            embedding_function=embedding,
            collection_name=collection_name,
            connection_args=connection,
            index_params={"index_type": index_type, "metric_type": "COSINE", "params": {}},
            search_params={"metric_type": "COSINE", "params": {}},
            primary_field="pk",
            text_field="text",
            vector_field="vector",
        )
        self._created = False

    def _exists(self) -> bool:
        if not self._created:
            self._created = bool(self.client.has_collection(self.collection_name))
        return self._created

    def _create(self, dim: int) -> None:
        schema = self.client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=64)
        schema.add_field("doc_id", DataType.VARCHAR, max_length=_VARCHAR_MAX)
        schema.add_field("text", DataType.VARCHAR, max_length=_VARCHAR_MAX)
        schema.add_field("metadata", DataType.JSON)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
        index = self.client.prepare_index_params()
        index.add_index("vector", index_type=self._index_type, metric_type="COSINE")
        self.client.create_collection(
            self.collection_name,
            schema=schema,
            index_params=index,
            consistency_level=self.consistency_level,
        )
        self._created = True
        self._init()  # langchain-milvus reads the new collection's fields and index
        logger.info("created Milvus collection %s (dim %d)", self.collection_name, dim)

    def add_embeddings(  # type: ignore[override]
        self,
        texts: Sequence[str],
        vectors: Sequence[Sequence[float]] | np.ndarray,
        metadatas: Sequence[dict[str, Any]] | None = None,
        ids: Sequence[str | None] | None = None,
        **kwargs: Any,
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
            rows = [
                {
                    "pk": engine_key(doc_ids[n]),
                    "doc_id": doc_ids[n],
                    "text": texts[n][:MAX_STORED_TEXT],
                    "metadata": dict(metas[n]),
                    "vector": unit[n].tolist(),
                }
                for n in range(start, min(start + _BATCH, len(texts)))
            ]
            self.client.upsert(self.collection_name, rows)
        return doc_ids

    def add_texts(  # type: ignore[override]
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        timeout: float | None = None,
        batch_size: int = 1000,
        *,
        ids: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Embed and add texts; returns their ids (generated when not given)."""
        texts = list(texts)
        if not texts:
            return []
        embeddings = self.embedding_func
        if not isinstance(embeddings, Embeddings):
            raise ValueError("add_texts needs one dense Embeddings")
        return self.add_embeddings(texts, embeddings.embed_documents(texts), metadatas, ids)

    def vectors(self, ids: Sequence[str]) -> np.ndarray:
        """Return the stored unit vectors of ``ids`` (KeyError for an unknown id)."""
        found: dict[str, np.ndarray] = {}
        if ids and self._exists():
            for start in range(0, len(ids), 1024):
                keys = [engine_key(i) for i in ids[start : start + 1024]]
                for row in self.client.get(
                    self.collection_name, ids=keys, output_fields=["doc_id", "vector"]
                ):
                    found[str(row["doc_id"])] = np.asarray(row["vector"], dtype=np.float32)
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
        param: dict[str, Any] | None = None,
        expr: str | None = None,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> list[tuple[Document, float]]:
        """Return ``(document, cosine)`` pairs, best first (``expr``: a Milvus filter)."""
        if k <= 0 or not self._exists():
            return []
        result = self.client.search(
            self.collection_name,
            [unit_rows(embedding)[0].tolist()],
            limit=k,
            filter=expr or "",
            output_fields=_OUT,
            search_params=param or {"metric_type": "COSINE", "params": {}},
            timeout=timeout,
        )
        return [(self._parse_document(hit["entity"]), float(hit["distance"])) for hit in result[0]]

    def _parse_document(self, data: dict[str, Any]) -> Document:
        """Documents carry their string ids (LangChain's own search methods too)."""
        return Document(
            id=data.get("doc_id"),
            page_content=str(data.get("text", "")),
            metadata=dict(data.get("metadata") or {}),
        )

    def delete(  # type: ignore[override]
        self, ids: list[str] | None = None, expr: str | None = None, **kwargs: Any
    ) -> bool | None:
        """Delete documents by id (unknown ids are ignored); ``expr`` is not taken."""
        if expr is not None:
            raise ValueError("MilvusVectors.delete takes ids only")
        if ids and self._exists():
            self.client.delete(self.collection_name, ids=[engine_key(i) for i in ids])
        return True

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """Return the stored documents for the ids that exist, in the given order."""
        if not ids or not self._exists():
            return []
        rows = self.client.get(
            self.collection_name, ids=[engine_key(i) for i in ids], output_fields=_OUT
        )
        by_id = {d.id: d for d in (self._parse_document(r) for r in rows)}
        return [by_id[i] for i in ids if i in by_id]

    def __len__(self) -> int:
        """Number of stored documents."""
        if not self._exists():
            return 0
        rows = self.client.query(self.collection_name, filter="", output_fields=["count(*)"])
        return int(rows[0]["count(*)"])

    def documents(self) -> Iterator[Document]:
        """Yield every stored document (read in batches of 1,000)."""
        if not self._exists():
            return
        it = self.client.query_iterator(
            self.collection_name, batch_size=1000, filter="", output_fields=_OUT
        )
        try:
            while batch := it.next():
                yield from (self._parse_document(row) for row in batch)
        finally:
            it.close()

    def save(self, path: str | Path) -> None:
        """Flush the collection (sealed segments search faster than growing ones)."""
        if self._exists():
            self.client.flush(self.collection_name)

    def drop(self) -> None:
        """Delete the whole collection."""
        if self._exists():
            self.client.drop_collection(self.collection_name)
        self._created = False

    def close(self) -> None:
        """Close this store's Milvus connection."""
        self.client.close()
