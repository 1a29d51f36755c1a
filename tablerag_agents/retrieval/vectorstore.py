"""A LangChain ``VectorStore`` over a FAISS inner-product index, persisted without pickle."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import pandas as pd
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from tablerag_agents.errors import IndexNotFoundError, MalformedIndexError
from tablerag_agents.models.embeddings import unit_rows
from tablerag_agents.retrieval.faiss_file import read_flat_index
from tablerag_agents.retrieval.vector_index import VectorIndex

logger = logging.getLogger(__name__)

_INDEX_FILE = "faiss.index"
_DOCS_FILE = "docstore.parquet"
BLAS_SEARCH_MIN_VECTORS = 20_000
"""From this many vectors, one query is scored by a BLAS product on all cores.

FAISS scans a flat index for a single query on one core; NumPy's BLAS spreads
the same product over every core (about 2x faster on 2 cores at 100k vectors).
"""


def flat_top_k(index: Any, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(scores, labels)`` of the ``k`` best vectors of an ``IndexIDMap2(IndexFlatIP)``.

    One unit query; inner products by a BLAS product over FAISS's own storage
    (no copy), best first; an exact tie puts the later stored vector first, as
    FAISS's own search does.
    """
    flat: Any = faiss.downcast_index(index.index)
    n, dim = int(flat.ntotal), int(flat.d)
    stored = faiss.rev_swig_ptr(flat.get_xb(), n * dim).reshape(n, dim)
    scores = stored @ query.reshape(dim)
    k = min(k, n)
    best = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
    best = best[np.lexsort((-best, -scores[best]))]
    labels = faiss.rev_swig_ptr(index.id_map.data(), n)[best]
    return scores[best], np.asarray(labels, dtype=np.int64)


def aligned_inputs(
    texts: Sequence[str],
    vectors: Sequence[Sequence[float]] | np.ndarray,
    metadatas: Sequence[dict[str, Any]] | None,
    ids: Sequence[str | None] | None,
) -> tuple[list[dict[str, Any]], list[str | None]]:
    """The metadatas and ids of an ``add_embeddings`` call, one per text.

    Raises:
        ValueError: The texts, vectors, metadatas and ids differ in length.
    """
    metas = list(metadatas) if metadatas is not None else [{} for _ in texts]
    given: list[str | None] = list(ids) if ids is not None else [None] * len(texts)
    if not len(texts) == len(metas) == len(given) == len(vectors):
        raise ValueError("texts, vectors, metadatas and ids must have the same length")
    return metas, given


class FaissVectorStore(VectorIndex):
    """Cosine-similarity vector store on ``faiss.IndexFlatIP`` over unit vectors.

    Scores returned by ``similarity_search_with_score`` are cosine similarities
    (higher is better). Adding a document whose id already exists replaces it.
    ``save``/``load`` write ``faiss.write_index`` plus a Parquet docstore: no pickle.
    """

    def __init__(self, embedding: Embeddings) -> None:
        """Create an empty store; the dimension is fixed by the first vectors added."""
        self._embedding = embedding
        self._index: Any = None  # faiss.IndexIDMap2 over IndexFlatIP
        self._docs: dict[int, Document] = {}
        self._label_of: dict[str, int] = {}
        self._next_label = 0

    @property
    def embeddings(self) -> Embeddings:
        """The embeddings used for texts and queries."""
        return self._embedding

    @property
    def dim(self) -> int | None:
        """Vector dimension, or None while the store is empty and never used."""
        return None if self._index is None else int(self._index.d)

    def __len__(self) -> int:
        """Number of stored documents."""
        return len(self._docs)

    def _ensure_index(self, dim: int) -> Any:
        if self._index is None:
            self._index = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        elif self._index.d != dim:
            raise ValueError(f"vectors have dimension {dim}, the index has {self._index.d}")
        return self._index

    def add_embeddings(
        self,
        texts: Sequence[str],
        vectors: Sequence[Sequence[float]] | np.ndarray,
        metadatas: Sequence[dict[str, Any]] | None = None,
        ids: Sequence[str | None] | None = None,
    ) -> list[str]:
        """Add texts with precomputed vectors; existing ids are replaced."""
        if len(texts) == 0:
            return []
        metadatas, given = aligned_inputs(texts, vectors, metadatas, ids)
        out_ids = [i if i else f"doc-{self._next_label + n}" for n, i in enumerate(given)]
        self.delete([i for i in out_ids if i in self._label_of])
        unit = unit_rows(vectors)
        index = self._ensure_index(unit.shape[1])
        labels = np.arange(self._next_label, self._next_label + len(texts), dtype=np.int64)
        self._next_label += len(texts)
        index.add_with_ids(unit, labels)
        for label, doc_id, text, meta in zip(
            labels.tolist(), out_ids, texts, metadatas, strict=True
        ):
            self._docs[label] = Document(page_content=text, metadata=dict(meta), id=doc_id)
            self._label_of[doc_id] = label
        return out_ids

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Embed and add texts; returns their ids (generated when not given)."""
        texts = list(texts)
        if not texts:
            return []
        vectors = self._embedding.embed_documents(texts)
        return self.add_embeddings(texts, vectors, metadatas, ids)

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Delete documents by id; unknown ids are ignored. Returns True."""
        if not ids:
            return True
        labels = [self._label_of.pop(i) for i in ids if i in self._label_of]
        if labels and self._index is not None:
            self._index.remove_ids(np.asarray(labels, dtype=np.int64))
            for label in labels:
                self._docs.pop(label, None)
        return True

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """Return the stored documents for the ids that exist, in the given order."""
        return [self._docs[self._label_of[i]] for i in ids if i in self._label_of]

    def documents(self) -> Iterator[Document]:
        """Yield every stored document, oldest first."""
        return iter([self._docs[label] for label in sorted(self._docs)])

    def vectors(self, ids: Sequence[str]) -> np.ndarray:
        """Return the stored unit vectors of ``ids`` (KeyError for an unknown id)."""
        if not ids:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        return np.stack([self._index.reconstruct(int(self._label_of[i])) for i in ids])

    def similarity_search_with_score_by_vector(
        self,
        embedding: Sequence[float] | np.ndarray,
        k: int = 4,
        filter: dict[str, Any] | Callable[[dict[str, Any]], bool] | None = None,
        **kwargs: Any,
    ) -> list[tuple[Document, float]]:
        """Return ``(document, cosine)`` pairs, best first, optionally filtered by metadata."""
        if self._index is None or not self._docs or k <= 0:
            return []
        # A metadata filter is applied after search, so search everything then.
        fetch = len(self._docs) if filter is not None else min(k, len(self._docs))
        query = unit_rows(embedding)
        if self._index.ntotal >= BLAS_SEARCH_MIN_VECTORS and len(query) == 1:
            top, labels = flat_top_k(self._index, query, fetch)
        else:
            scores, found = self._index.search(query, fetch)
            top, labels = scores[0], found[0]
        keep = _metadata_predicate(filter)
        out: list[tuple[Document, float]] = []
        for score, label in zip(top.tolist(), labels.tolist(), strict=True):
            doc = self._docs.get(int(label))
            if doc is not None and keep(doc.metadata):
                out.append((doc, float(score)))
                if len(out) == k:
                    break
        return out

    def similarity_search_with_score(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """Return ``(document, cosine)`` pairs for a text query, best first."""
        vector = self._embedding.embed_query(query)
        return self.similarity_search_with_score_by_vector(vector, k, **kwargs)

    def similarity_search_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[Document]:
        """Return the documents nearest to a vector."""
        return [d for d, _ in self.similarity_search_with_score_by_vector(embedding, k, **kwargs)]

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        """Return the documents most similar to ``query``."""
        return [d for d, _ in self.similarity_search_with_score(query, k, **kwargs)]

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        """Map cosine in [-1, 1] to a relevance in [0, 1]."""
        return lambda score: (score + 1.0) / 2.0

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> FaissVectorStore:
        """Create a store and add ``texts``."""
        store = cls(embedding)
        store.add_texts(texts, metadatas, ids=ids)
        return store

    def save(self, path: str | Path) -> None:
        """Write ``faiss.index`` and ``docstore.parquet`` into the folder ``path``."""
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        labels = sorted(self._docs)
        frame = pd.DataFrame(
            {
                "label": np.asarray(labels, dtype=np.int64),
                "id": [self._docs[x].id for x in labels],
                "text": [self._docs[x].page_content for x in labels],
                "metadata": [json.dumps(self._docs[x].metadata) for x in labels],
            }
        )
        frame.to_parquet(folder / _DOCS_FILE, index=False, compression="zstd")
        index = self._index if self._index is not None else faiss.IndexIDMap2(faiss.IndexFlatIP(1))
        faiss.write_index(index, str(folder / _INDEX_FILE))

    @classmethod
    def load(cls, path: str | Path, embedding: Embeddings) -> FaissVectorStore:
        """Read a store written by ``save``.

        The index file is untrusted: its header is checked against its length
        and the docstore before FAISS reads it (see :mod:`.faiss_file`).

        Raises:
            IndexNotFoundError: If the folder or its files are missing.
            MalformedIndexError: If the index file is not the one ``save`` writes
                for this docstore (type, sizes, length or ids).
        """
        folder = Path(path)
        if not (folder / _INDEX_FILE).is_file() or not (folder / _DOCS_FILE).is_file():
            raise IndexNotFoundError(folder)
        store = cls(embedding)
        frame = pd.read_parquet(folder / _DOCS_FILE)
        if len(frame):
            store._index = read_flat_index(folder / _INDEX_FILE, expected_ntotal=len(frame))
            ids = faiss.vector_to_array(store._index.id_map)
            if set(ids.tolist()) != set(frame["label"].tolist()):
                raise MalformedIndexError(folder, _INDEX_FILE, "maps ids not in its docstore")
        for label, doc_id, text, meta in frame.itertuples(index=False, name=None):
            store._docs[int(label)] = Document(
                page_content=text, metadata=json.loads(meta), id=doc_id
            )
            store._label_of[doc_id] = int(label)
        store._next_label = int(frame["label"].max()) + 1 if len(frame) else 0
        return store


def _metadata_predicate(
    filter: dict[str, Any] | Callable[[dict[str, Any]], bool] | None,
) -> Callable[[dict[str, Any]], bool]:
    """Turn a metadata filter (equality dict or callable) into a predicate."""
    if filter is None:
        return lambda _meta: True
    if callable(filter):
        return filter
    wanted = dict(filter)
    return lambda meta: all(meta.get(key) == value for key, value in wanted.items())
