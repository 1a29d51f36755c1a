"""ColBERT-style late interaction (MaxSim) over per-token vectors of a small encoder.

An offline stand-in for ColBERT: the per-token outputs of a sentence encoder
(MiniLM by default), each L2-normalised; ``score(q, d) = sum_i max_j cos(q_i, d_j)``.
Use :class:`ColBERTRetriever` as a full retriever over a small collection, or
:class:`MaxSimReranker` to re-score candidates from another retriever.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from langchain_core.embeddings import Embeddings

from tablerag_agents.errors import IndexNotFoundError
from tablerag_agents.models.embeddings import (
    SentenceTransformerEmbeddings,
    encode_threads,
    unit_outputs,
    unit_rows,
)
from tablerag_agents.retrieval.base import Doc, Hit, Reranker, Retriever
from tablerag_agents.retrieval.token_matrix import (
    OFFSETS_FILE,
    TOKENS_FILE,
    TokenMatrix,
)

logger = logging.getLogger(__name__)

TokenEncoder = Callable[[Sequence[str]], list[np.ndarray]]
"""Maps texts to one (n_tokens, dim) array of unit vectors per text."""


def maxsim(query_tokens: np.ndarray, doc_tokens: np.ndarray) -> float:
    """Return the late-interaction score: sum over query tokens of the best doc-token cosine.

    Both arguments are (n, dim) arrays of unit vectors; an empty side scores 0.
    """
    if len(query_tokens) == 0 or len(doc_tokens) == 0:
        return 0.0
    sims = as_float32(query_tokens) @ as_float32(doc_tokens).T
    return float(sims.max(axis=1).sum())


def maxsim_each(query_tokens: np.ndarray, doc_tokens: Sequence[np.ndarray]) -> list[float]:
    """:func:`maxsim` of the query against each doc, in one stacked product per doc length.

    The docs' rows are converted to float32 in one call. Docs of one length go through
    one batched product (a slice per doc), so identical docs (a table and its copy)
    score exactly alike; the scores matched :func:`maxsim`'s bit for bit in the tests.
    """
    out = np.zeros(len(doc_tokens), dtype=np.float32)
    nonempty = [mat for mat in doc_tokens if len(mat)]
    if len(query_tokens) == 0 or not nonempty:
        return out.tolist()  # type: ignore[no-any-return]
    q = as_float32(query_tokens).T  # (dim, q)
    rows = as_float32(np.concatenate(nonempty))
    starts = np.cumsum([0, *(len(mat) for mat in doc_tokens)])  # doc i's first row in rows
    by_length: dict[int, list[int]] = {}
    for i, mat in enumerate(doc_tokens):
        if len(mat):
            by_length.setdefault(len(mat), []).append(i)
    for length, members in by_length.items():
        stack = np.stack([rows[starts[i] : starts[i] + length] for i in members])
        out[members] = np.matmul(stack, q).max(axis=1).sum(axis=1)  # (docs, length, q)
    return out.tolist()  # type: ignore[no-any-return]


@functools.cache
def _torch() -> Any:
    """The torch module, or None on the core install (looked up once)."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def as_float32(arr: np.ndarray) -> np.ndarray:
    """``arr`` as a float32 array; float16 goes through torch when installed (about 2x NumPy)."""
    torch = _torch() if arr.dtype == np.float16 else None
    if torch is None:
        return np.asarray(arr, dtype=np.float32)
    return torch.from_numpy(np.ascontiguousarray(arr)).float().numpy()  # type: ignore[no-any-return]


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
        return [unit_rows(t.detach().cpu().numpy()) for t in outs]

    return encode


class SharedQueryEncoder(Embeddings):
    """Sentence-transformers embeddings whose query vector and query tokens share one pass.

    A fused search needs both the pooled query vector (dense channel) and the
    per-token vectors (MaxSim channel); this runs the encoder once per query
    (the last query is memoised). :meth:`encode_documents` gives documents
    both outputs from one pass too (indexing runs the encoder once, not twice).
    ``name`` is the wrapped embeddings' name, so index keys do not change.
    """

    def __init__(self, embeddings: Any, *, batch_size: int = 128) -> None:
        """Wrap embeddings exposing a sentence-transformers ``.model``.

        ``batch_size`` texts go through the encoder at once. Indexing passes
        texts sorted by length, so a batch pads little and a bigger batch only
        saves per-call overhead: 128 costs ~15% less CPU per text than 64 with
        two torch threads on a busy 2-core machine (the same with one thread).
        """
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
                self._memo[text] = unit_outputs(out)

    def encode_documents(self, texts: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Return each text's unit vector and unit token vectors (padding dropped), one pass."""
        if not texts:
            return []
        with encode_threads(self.inner, len(texts)):
            outs = self.model.encode(
                list(texts), output_value=None, batch_size=self.batch_size, show_progress_bar=False
            )
        return [unit_outputs(out) for out in outs]

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Tokens the encoder sees per text (special tokens included, after truncation)."""
        if not texts:
            return []
        ids = self.model.tokenizer(
            list(texts),
            truncation=True,
            max_length=self.model.max_seq_length,
            return_attention_mask=False,
            return_token_type_ids=False,
        )["input_ids"]
        return [len(i) for i in ids]

    def _query(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        if text not in self._memo:
            if len(self._memo) > 4096:  # bound the memo; single queries replace it
                self._memo = {}
            if isinstance(self.inner, SentenceTransformerEmbeddings):
                self._memo[text] = self.inner.query_outputs(text)  # ONNX when available
            else:
                with encode_threads(self.inner, 1):
                    out = self.model.encode([text], output_value=None, show_progress_bar=False)
                self._memo[text] = unit_outputs(out[0])
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
    """Full late-interaction retriever; token matrices in float16 (see :class:`TokenMatrix`)."""

    name = "colbert"

    def __init__(self, encoder: TokenEncoder, *, dtype: str = "float16") -> None:
        """Create an empty index using ``encoder`` for docs and queries."""
        self.encoder = encoder
        self.dtype = np.dtype(dtype)
        self._docs: list[Doc] = []
        self._pos: dict[str, int] = {}
        self._matrix = TokenMatrix(dtype)

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
        seen: set[str] = set()
        for doc in docs:
            if doc.id in self._pos or doc.id in seen:
                raise ValueError(f"duplicate doc id {doc.id!r}")
            seen.add(doc.id)
        self._matrix.append(token_mats)
        for doc in docs:
            self._pos[doc.id] = len(self._docs)
            self._docs.append(doc)

    def delete(self, ids: Sequence[str]) -> None:
        """Remove docs by id (unknown ids are ignored); nothing is encoded again."""
        gone = {self._pos[i] for i in ids if i in self._pos}
        if not gone:
            return
        keep = [n for n in range(len(self._docs)) if n not in gone]
        mats = [self._matrix.doc(n) for n in keep]
        docs = [self._docs[n] for n in keep]
        self._docs, self._pos, self._matrix = [], {}, TokenMatrix(str(self.dtype))
        self.add_with_tokens(docs, mats)

    def subset(self, ids: Sequence[str]) -> ColBERTRetriever:
        """Return a new index over the docs ``ids`` (KeyError for an unknown id)."""
        out = ColBERTRetriever(self.encoder, dtype=str(self.dtype))
        positions = [self._pos[i] for i in ids]
        out.add_with_tokens(
            [self._docs[n] for n in positions], [self._matrix.doc(n) for n in positions]
        )
        return out

    def encode_query(self, query: str) -> np.ndarray:
        """Return the query's unit token vectors."""
        return self.encoder([query])[0]

    def scores_all(self, query_tokens: np.ndarray) -> np.ndarray:
        """MaxSim of every doc, in insertion order."""
        return self._matrix.maxsim_all(query_tokens)

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
        mats = [self._matrix.doc(self._pos[doc_id]) for doc_id in ids]
        return maxsim_each(self.encode_query(query), mats)

    def _hit(self, pos: int, score: float) -> Hit:
        doc = self._docs[pos]
        return Hit(id=doc.id, score=score, text=doc.text, metadata=doc.metadata)

    def save(self, path: str | Path) -> None:
        """Write ``tokens.npy``, ``offsets.npy`` and ``docs.parquet`` (no pickle)."""
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        self._matrix.save(folder)
        pd.DataFrame(
            {
                "id": [d.id for d in self._docs],
                "text": [d.text for d in self._docs],
                "metadata": [json.dumps(d.metadata) for d in self._docs],
            }
        ).to_parquet(folder / "docs.parquet", index=False, compression="zstd")

    @classmethod
    def load(cls, path: str | Path, encoder: TokenEncoder) -> ColBERTRetriever:
        """Read an index written by ``save``; its token matrix stays on disk, memory-mapped.

        Raises:
            IndexNotFoundError: A file is missing.
            MalformedIndexError: The token files do not match the docs.
        """
        folder = Path(path)
        if not all((folder / f).is_file() for f in (TOKENS_FILE, OFFSETS_FILE, "docs.parquet")):
            raise IndexNotFoundError(folder)
        frame = pd.read_parquet(folder / "docs.parquet")
        matrix = TokenMatrix.load(folder, len(frame))
        self = cls(encoder, dtype=str(matrix.dtype))
        self._matrix = matrix
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
        scores = maxsim_each(mats[0], mats[1:])
        order = sorted(range(len(hits)), key=lambda i: -scores[i])
        out = [Hit(hits[i].id, scores[i], hits[i].text, hits[i].metadata) for i in order]
        return out if k is None else out[:k]
