"""Dense retrieval through any LangChain ``VectorStore`` (default: our FAISS store)."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore

from tablerag_agents.retrieval.base import Doc, Hit, Retriever
from tablerag_agents.retrieval.vector_index import VectorIndex
from tablerag_agents.retrieval.vectorstore import FaissVectorStore, unit_rows

logger = logging.getLogger(__name__)


class DenseRetriever(Retriever):
    """Embedding search; cosine similarity with any :class:`~.vector_index.VectorIndex`.

    The default store is ``FaissVectorStore``; the Qdrant and Milvus stores
    (``qdrant_store``, ``milvus_store``) are VectorIndex stores too, so they
    score alike. Any other LangChain ``VectorStore`` (Chroma, PGVector...) works
    as well: its scores are its relevance scores in [0, 1] (or its native scores
    when it defines no relevance scale), and ``score()`` re-embeds the stored texts.
    """

    name = "dense"

    def __init__(
        self, embeddings: Embeddings | None = None, *, vectorstore: VectorStore | None = None
    ) -> None:
        """Use ``vectorstore`` if given, else a new ``FaissVectorStore(embeddings)``."""
        if vectorstore is None:
            if embeddings is None:
                raise ValueError("DenseRetriever needs embeddings or a vectorstore")
            vectorstore = FaissVectorStore(embeddings)
        self.vectorstore = vectorstore
        self._count = 0  # docs added to a store that cannot count them
        self._last: tuple[str, np.ndarray] | None = None  # memo of the last query vector

    @property
    def embeddings(self) -> Embeddings:
        """The embeddings of the underlying store."""
        emb = self.vectorstore.embeddings
        if emb is None:
            raise ValueError("the vector store exposes no embeddings")
        return emb

    def __len__(self) -> int:
        """Number of indexed docs."""
        if isinstance(self.vectorstore, VectorIndex):
            return len(self.vectorstore)
        return self._count

    def add(self, docs: Sequence[Doc]) -> None:
        """Embed and add docs."""
        if not docs:
            return
        self.vectorstore.add_texts(
            [d.text for d in docs], [dict(d.metadata) for d in docs], ids=[d.id for d in docs]
        )
        self._count += len(docs)

    def add_with_vectors(self, docs: Sequence[Doc], vectors: np.ndarray) -> None:
        """Add docs whose vectors were computed elsewhere (VectorIndex stores only)."""
        if not isinstance(self.vectorstore, VectorIndex):
            raise TypeError("precomputed vectors need a VectorIndex store (FAISS, Qdrant, Milvus)")
        self.vectorstore.add_embeddings(
            [d.text for d in docs], vectors, [dict(d.metadata) for d in docs], [d.id for d in docs]
        )

    def documents(self) -> Iterator[Document]:
        """Yield every stored document (VectorIndex stores only)."""
        if not isinstance(self.vectorstore, VectorIndex):
            raise TypeError("documents() needs a VectorIndex store (FAISS, Qdrant, Milvus)")
        return self.vectorstore.documents()

    def query_vector(self, query: str) -> np.ndarray:
        """Return the unit query vector (the last one is memoised)."""
        if self._last is None or self._last[0] != query:
            self._last = (query, unit_rows(self.embeddings.embed_query(query))[0])
        return self._last[1]

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """Return the ``k`` nearest docs, best first."""
        if k <= 0:
            return []
        if isinstance(self.vectorstore, VectorIndex):
            pairs = self.vectorstore.similarity_search_with_score_by_vector(
                self.query_vector(query), k=k
            )
        else:
            try:
                pairs = self.vectorstore.similarity_search_with_relevance_scores(query, k=k)
            except NotImplementedError:
                # The store defines no relevance scale: use its native scores,
                # which LangChain's own stores report as similarities.
                pairs = self.vectorstore.similarity_search_with_score(query, k=k)
        return [_to_hit(doc, score) for doc, score in pairs]

    def search_by_vector(self, vector: Sequence[float], k: int = 10) -> list[Hit]:
        """Return the ``k`` docs nearest to a query vector (VectorIndex stores only)."""
        if not isinstance(self.vectorstore, VectorIndex):
            raise TypeError("search_by_vector needs a VectorIndex store (FAISS, Qdrant, Milvus)")
        pairs = self.vectorstore.similarity_search_with_score_by_vector(vector, k=k)
        return [_to_hit(doc, score) for doc, score in pairs]

    def score(self, query: str, ids: Sequence[str]) -> list[float]:
        """Return the cosine between ``query`` and each doc (KeyError for an unknown id)."""
        if not ids:
            return []
        query_vec = self.query_vector(query)
        if isinstance(self.vectorstore, VectorIndex):
            doc_vecs = self.vectorstore.vectors(ids)
        else:
            docs = {d.id: d for d in self.vectorstore.get_by_ids(list(ids))}
            missing = [i for i in ids if i not in docs]
            if missing:
                raise KeyError(missing[0])
            doc_vecs = unit_rows(
                self.embeddings.embed_documents([docs[i].page_content for i in ids])
            )
        return (doc_vecs @ query_vec).astype(float).tolist()

    def delete(self, ids: Sequence[str]) -> None:
        """Remove docs by id from the store (unknown ids are ignored)."""
        if ids:
            self.vectorstore.delete(list(ids))
            if not isinstance(self.vectorstore, VectorIndex):
                self._count = max(0, self._count - len(ids))

    def subset(self, ids: Sequence[str]) -> DenseRetriever:
        """Return an in-memory FAISS retriever over ``ids``: stored vectors, no re-embedding."""
        if not isinstance(self.vectorstore, VectorIndex):
            raise TypeError("subset() needs a VectorIndex store (FAISS, Qdrant, Milvus)")
        docs = {d.id: d for d in self.vectorstore.get_by_ids(list(ids))}
        out = DenseRetriever(self.embeddings)
        out.add_with_vectors(
            [Doc(i, docs[i].page_content, dict(docs[i].metadata)) for i in ids],
            self.vectorstore.vectors(ids),
        )
        return out

    def save(self, path: str | Path) -> None:
        """Persist a VectorIndex store (FAISS writes files under ``path``, engines flush)."""
        if not isinstance(self.vectorstore, VectorIndex):
            raise TypeError("save() needs a VectorIndex store; persist your store itself")
        self.vectorstore.save(path)

    @classmethod
    def load(cls, path: str | Path, embeddings: Embeddings) -> DenseRetriever:
        """Read a retriever saved by :meth:`save` (IndexNotFoundError if absent)."""
        return cls(vectorstore=FaissVectorStore.load(path, embeddings))


def _to_hit(doc: Document, score: float) -> Hit:
    return Hit(id=str(doc.id), score=float(score), text=doc.page_content, metadata=doc.metadata)
