"""ColBERT-style late interaction (MaxSim) over per-token vectors of a small encoder.

An offline stand-in for ColBERT: the per-token outputs of a sentence encoder
(MiniLM by default), each L2-normalised; ``score(q, d) = sum_i max_j cos(q_i, d_j)``.
Use :class:`ColBERTRetriever` as a full retriever over a small collection, or
:class:`MaxSimReranker` to re-score candidates from another retriever.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from langchain_core.embeddings import Embeddings

from tablerag_agents.errors import IndexNotFoundError
from tablerag_agents.models.embeddings import encode_threads
from tablerag_agents.retrieval.base import Doc, Hit, Reranker, Retriever

logger = logging.getLogger(__name__)

TokenEncoder = Callable[[Sequence[str]], list[np.ndarray]]
"""Maps texts to one (n_tokens, dim) array of unit vectors per text."""


def maxsim(query_tokens: np.ndarray, doc_tokens: np.ndarray) -> float:
    """Return the late-interaction score: sum over query tokens of the best doc-token cosine.

    Both arguments are (n, dim) arrays of unit vectors; an empty side scores 0.
    """
    if len(query_tokens) == 0 or len(doc_tokens) == 0:
        return 0.0
    sims = query_tokens.astype(np.float32) @ doc_tokens.astype(np.float32).T
    return float(sims.max(axis=1).sum())


def maxsim_many(
    query_tokens: np.ndarray, tokens: np.ndarray, offsets: np.ndarray, *, chunk: int = 65536
) -> np.ndarray:
    """Score every doc of a packed token matrix at once.

    Args:
        query_tokens: (q, dim) unit vectors.
        tokens: (total, dim) doc token vectors, docs stored one after another.
        offsets: (n_docs + 1,) start of each doc in ``tokens``; doc i is
            ``tokens[offsets[i]:offsets[i + 1]]``. Empty docs score 0.
        chunk: Token rows converted to float32 at a time (bounds memory).

    Returns:
        (n_docs,) float32 MaxSim scores.
    """
    n_docs = len(offsets) - 1
    out = np.zeros(n_docs, dtype=np.float32)
    if n_docs == 0 or len(query_tokens) == 0 or len(tokens) == 0:
        return out
    q = np.ascontiguousarray(query_tokens, dtype=np.float32).T  # (dim, q)
    sims = np.empty((len(tokens), q.shape[1]), dtype=np.float32)
    for start in range(0, len(tokens), chunk):
        block = np.asarray(tokens[start : start + chunk], dtype=np.float32)
        np.matmul(block, q, out=sims[start : start + len(block)])
    starts = offsets[:-1]
    nonempty = offsets[1:] > starts
    best = np.maximum.reduceat(sims, starts[nonempty], axis=0)  # (n_nonempty, q)
    out[nonempty] = best.sum(axis=1)
    return out


def _unit(arr: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(arr, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    return (arr / norms).astype(np.float32)


def sentence_transformer_token_encoder(model: Any, *, batch_size: int = 64) -> TokenEncoder:
    """Build a token encoder from a ``SentenceTransformer`` (or embeddings with ``.model``).

    Special tokens ([CLS], [SEP]) are kept, as in ColBERT; padding is dropped.
    """
    if isinstance(model, SharedQueryEncoder):
        return model.tokens
    st_model = getattr(model, "model", model)

    def encode(texts: Sequence[str]) -> list[np.ndarray]:
        if not texts:
            return []
        with encode_threads(model, len(texts)):
            outs = st_model.encode(
                list(texts),
                output_value="token_embeddings",
                batch_size=batch_size,
                show_progress_bar=False,
            )
        return [_unit(t.detach().cpu().numpy()) for t in outs]

    return encode


class SharedQueryEncoder(Embeddings):
    """Sentence-transformers embeddings whose query vector and query tokens share one pass.

    A fused search needs both the pooled query vector (dense channel) and the
    per-token vectors (MaxSim channel); this runs the encoder once per query
    (the last query is memoised). :meth:`encode_documents` gives documents
    both outputs from one pass too (indexing runs the encoder once, not twice).
    ``name`` is the wrapped embeddings' name, so index keys do not change.
    """

    def __init__(self, embeddings: Any, *, batch_size: int = 64) -> None:
        """Wrap embeddings exposing a sentence-transformers ``.model``."""
        self.inner = embeddings
        self.batch_size = batch_size
        self._doc_tokens = sentence_transformer_token_encoder(embeddings)
        self._memo: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    @property
    def name(self) -> str:
        """The wrapped embeddings' index key."""
        from tablerag_agents.models.embeddings import embeddings_name

        return embeddings_name(self.inner)

    @property
    def model(self) -> Any:
        """The wrapped ``SentenceTransformer``."""
        return self.inner.model

    def prime(self, queries: Sequence[str]) -> None:
        """Encode many queries in batches and keep them (replaces earlier memos).

        Batching is several times faster per query on CPU; ``search_many`` uses it.
        """
        self._memo = {}
        todo = list(dict.fromkeys(queries))
        for start in range(0, len(todo), self.batch_size):
            chunk = todo[start : start + self.batch_size]
            with encode_threads(self.inner, len(chunk)):
                outs = self.model.encode(chunk, output_value=None, show_progress_bar=False)
            for text, out in zip(chunk, outs, strict=True):
                mask = out["attention_mask"].bool()
                tokens = out["token_embeddings"][mask].detach().cpu().numpy()
                vector = out["sentence_embedding"].detach().cpu().numpy()
                self._memo[text] = (_unit(vector), _unit(tokens))

    def encode_documents(self, texts: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Return each text's unit vector and unit token vectors (padding dropped), one pass."""
        if not texts:
            return []
        with encode_threads(self.inner, len(texts)):
            outs = self.model.encode(
                list(texts), output_value=None, batch_size=self.batch_size, show_progress_bar=False
            )
        pairs = []
        for out in outs:
            mask = out["attention_mask"].bool()
            tokens = out["token_embeddings"][mask].detach().cpu().numpy()
            vector = out["sentence_embedding"].detach().cpu().numpy()
            pairs.append((_unit(vector), _unit(tokens)))
        return pairs

    def _query(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        if text not in self._memo:
            if len(self._memo) > 4096:  # bound the memo; single queries replace it
                self._memo = {}
            model = self.model
            with encode_threads(self.inner, 1):
                out = model.encode([text], output_value=None, show_progress_bar=False)[0]
            vector = _unit(out["sentence_embedding"].detach().cpu().numpy())
            tokens = _unit(out["token_embeddings"].detach().cpu().numpy())
            self._memo[text] = (vector, tokens)
        return self._memo[text]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents with the wrapped embeddings."""
        return self.inner.embed_documents(texts)  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        """Return the unit query vector (shares the pass with :meth:`tokens`)."""
        return self._query(text)[0].tolist()  # type: ignore[no-any-return]

    def tokens(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Token encoder: one text goes through the shared query pass, batches as usual."""
        if len(texts) == 1:
            return [self._query(texts[0])[1]]
        return self._doc_tokens(texts)


class ColBERTRetriever(Retriever):
    """Full late-interaction retriever; token matrices kept in float16 (one packed array)."""

    name = "colbert"

    def __init__(self, encoder: TokenEncoder, *, dtype: str = "float16") -> None:
        """Create an empty index using ``encoder`` for docs and queries."""
        self.encoder = encoder
        self.dtype = np.dtype(dtype)
        self._docs: list[Doc] = []
        self._pos: dict[str, int] = {}
        self._chunks: list[np.ndarray] = []
        self._tokens: np.ndarray | None = None
        self._tokens32: np.ndarray | None = None
        self._offsets = np.zeros(1, dtype=np.int64)

    def __len__(self) -> int:
        """Number of indexed docs."""
        return len(self._docs)

    def add(self, docs: Sequence[Doc]) -> None:
        """Encode and add docs with new ids."""
        self.add_with_tokens(docs, self.encoder([d.text for d in docs]))

    def add_with_tokens(self, docs: Sequence[Doc], token_mats: Sequence[np.ndarray]) -> None:
        """Add docs whose token matrices were computed elsewhere (unit rows)."""
        if len(docs) != len(token_mats):
            raise ValueError("docs and token matrices must have the same length")
        for doc in docs:
            if doc.id in self._pos:
                raise ValueError(f"duplicate doc id {doc.id!r}")
        lengths = [len(m) for m in token_mats]
        for doc, mat in zip(docs, token_mats, strict=True):
            self._pos[doc.id] = len(self._docs)
            self._docs.append(doc)
            self._chunks.append(np.asarray(mat, dtype=self.dtype))
        ends = self._offsets[-1] + np.cumsum(np.asarray(lengths, dtype=np.int64))
        self._offsets = np.concatenate([self._offsets, ends])
        self._tokens = None
        self._tokens32 = None

    def _doc_tokens(self, pos: int) -> np.ndarray:
        return self._packed()[self._offsets[pos] : self._offsets[pos + 1]]

    def delete(self, ids: Sequence[str]) -> None:
        """Remove docs by id (unknown ids are ignored); nothing is encoded again."""
        gone = {self._pos[i] for i in ids if i in self._pos}
        if not gone:
            return
        keep = [n for n in range(len(self._docs)) if n not in gone]
        mats = [self._doc_tokens(n) for n in keep]
        docs = [self._docs[n] for n in keep]
        self._docs, self._pos, self._chunks = [], {}, []
        self._offsets = np.zeros(1, dtype=np.int64)
        self._tokens = self._tokens32 = None
        self.add_with_tokens(docs, mats)

    def subset(self, ids: Sequence[str]) -> ColBERTRetriever:
        """Return a new index over the docs ``ids`` (KeyError for an unknown id)."""
        out = ColBERTRetriever(self.encoder, dtype=str(self.dtype))
        positions = [self._pos[i] for i in ids]
        out.add_with_tokens(
            [self._docs[n] for n in positions], [self._doc_tokens(n) for n in positions]
        )
        return out

    def _packed(self) -> np.ndarray:
        if self._tokens is None:
            dim = self._chunks[0].shape[1] if self._chunks else 0
            self._tokens = (
                np.concatenate(self._chunks) if self._chunks else np.zeros((0, dim), self.dtype)
            )
            self._chunks = [self._tokens]  # keep one array, not thousands of views
        return self._tokens

    def encode_query(self, query: str) -> np.ndarray:
        """Return the query's unit token vectors."""
        return self.encoder([query])[0]

    def scores_all(self, query_tokens: np.ndarray) -> np.ndarray:
        """MaxSim of every doc, in insertion order.

        The first call keeps a float32 copy of the token matrix (twice the
        memory of float16, ~2.5x faster per search); ``add`` drops it.
        """
        if self._tokens32 is None:
            self._tokens32 = np.asarray(self._packed(), dtype=np.float32)
        return maxsim_many(query_tokens, self._tokens32, self._offsets)

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """Score every doc by MaxSim and return the best ``k``."""
        if not self._docs or k <= 0:
            return []
        scores = self.scores_all(self.encode_query(query))
        order = np.argsort(-scores, kind="stable")[:k]
        return [self._hit(int(i), float(scores[i])) for i in order]

    def score(self, query: str, ids: Sequence[str]) -> list[float]:
        """Return the MaxSim score of each id (KeyError for an unknown id)."""
        if not ids:
            return []
        qtok = self.encode_query(query)
        packed = self._packed()
        out = []
        for doc_id in ids:
            i = self._pos[doc_id]
            out.append(maxsim(qtok, packed[self._offsets[i] : self._offsets[i + 1]]))
        return out

    def _hit(self, pos: int, score: float) -> Hit:
        doc = self._docs[pos]
        return Hit(id=doc.id, score=score, text=doc.text, metadata=doc.metadata)

    def save(self, path: str | Path) -> None:
        """Write ``tokens.npy``, ``offsets.npy`` and ``docs.parquet`` (no pickle)."""
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        np.save(folder / "tokens.npy", self._packed(), allow_pickle=False)
        np.save(folder / "offsets.npy", self._offsets, allow_pickle=False)
        pd.DataFrame(
            {
                "id": [d.id for d in self._docs],
                "text": [d.text for d in self._docs],
                "metadata": [json.dumps(d.metadata) for d in self._docs],
            }
        ).to_parquet(folder / "docs.parquet", index=False, compression="zstd")

    @classmethod
    def load(cls, path: str | Path, encoder: TokenEncoder) -> ColBERTRetriever:
        """Read an index written by ``save`` (IndexNotFoundError if absent)."""
        folder = Path(path)
        if not all((folder / f).is_file() for f in ("tokens.npy", "offsets.npy", "docs.parquet")):
            raise IndexNotFoundError(folder)
        tokens = np.load(folder / "tokens.npy", allow_pickle=False)
        self = cls(encoder, dtype=str(tokens.dtype))
        self._tokens = tokens
        self._chunks = [tokens]
        self._offsets = np.load(folder / "offsets.npy", allow_pickle=False)
        frame = pd.read_parquet(folder / "docs.parquet")
        self._docs = [
            Doc(id=i, text=t, metadata=json.loads(m))
            for i, t, m in frame.itertuples(index=False, name=None)
        ]
        self._pos = {d.id: n for n, d in enumerate(self._docs)}
        return self


class MaxSimReranker(Reranker):
    """Re-score candidate hits by MaxSim between the query and each hit's text."""

    name = "maxsim"

    def __init__(self, encoder: TokenEncoder) -> None:
        """Use ``encoder`` for the query and the candidate texts."""
        self.encoder = encoder

    def rerank(self, query: str, hits: Sequence[Hit], k: int | None = None) -> list[Hit]:
        """Return ``hits`` re-scored by MaxSim, best first (ties keep the input order)."""
        if not hits:
            return []
        mats = self.encoder([query, *[h.text for h in hits]])
        scores = [maxsim(mats[0], m) for m in mats[1:]]
        order = sorted(range(len(hits)), key=lambda i: -scores[i])
        out = [Hit(hits[i].id, scores[i], hits[i].text, hits[i].metadata) for i in order]
        return out if k is None else out[:k]
