"""Lexical BM25 retrieval with bm25s, persisted without pickle."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import pandas as pd

from tablerag_agents.errors import IndexNotFoundError
from tablerag_agents.retrieval.base import Doc, Hit, Retriever
from tablerag_agents.retrieval.tokenize import Tokenizer

logger = logging.getLogger(__name__)
# bm25s forces its logger to DEBUG on import; let the application's logging config decide.
logging.getLogger("bm25s").setLevel(logging.NOTSET)

_DOCS_FILE = "docs.parquet"
_PARAMS_FILE = "bm25.json"
_BM25_DIR = "bm25s"
_TOKENS_FILE = "tokens.npz"
_VOCAB_FILE = "token_vocab.json"


class _TokenCache:
    """Token ids of every doc, so adding docs only tokenizes the new ones."""

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}
        self.docs: list[np.ndarray] = []

    def extend(self, token_lists: Sequence[list[str]]) -> None:
        vocab = self.vocab
        for tokens in token_lists:
            ids = [vocab.setdefault(t, len(vocab)) for t in tokens]
            self.docs.append(np.asarray(ids, dtype=np.int32))

    def tokenized(self) -> bm25s.tokenization.Tokenized:
        return bm25s.tokenization.Tokenized(
            ids=[d.tolist() for d in self.docs], vocab=dict(self.vocab)
        )

    def save(self, folder: Path) -> None:
        lengths = np.asarray([len(d) for d in self.docs], dtype=np.int64)
        flat = np.concatenate(self.docs) if self.docs else np.zeros(0, dtype=np.int32)
        np.savez_compressed(folder / _TOKENS_FILE, ids=flat, lengths=lengths)
        (folder / _VOCAB_FILE).write_text(json.dumps(self.vocab), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path) -> _TokenCache | None:
        if not (folder / _TOKENS_FILE).is_file() or not (folder / _VOCAB_FILE).is_file():
            return None
        cache = cls()
        cache.vocab = json.loads((folder / _VOCAB_FILE).read_text(encoding="utf-8"))
        with np.load(folder / _TOKENS_FILE, allow_pickle=False) as data:
            flat, lengths = data["ids"], data["lengths"]
        cache.docs = np.split(flat, np.cumsum(lengths)[:-1]) if len(lengths) else []
        return cache


class BM25Retriever(Retriever):
    """Okapi BM25 over docs tokenized by ``Tokenizer`` (stopwords, Snowball stems).

    Docs can be added at any time; the BM25 matrix is rebuilt lazily on the
    next search (bm25s cannot append). Docs that share no term with the query
    score 0 and are not returned, so a search may give fewer than ``k`` hits.
    """

    name = "bm25"

    def __init__(
        self,
        tokenizer: Tokenizer | None = None,
        *,
        k1: float = 1.5,
        b: float = 0.75,
        method: str = "lucene",
    ) -> None:
        """Create an empty index with BM25 parameters ``k1``, ``b`` and bm25s ``method``."""
        self.tokenizer = tokenizer or Tokenizer()
        self.k1, self.b, self.method = k1, b, method
        self._docs: list[Doc] = []
        self._pos: dict[str, int] = {}
        self._bm25: bm25s.BM25 | None = None
        self._tokens: _TokenCache | None = None  # built on first need
        self._tokens_dir: Path | None = None  # where saved token ids can be read from
        # One-entry memo: score fusion asks for the same query's scores twice.
        self._last: tuple[str, np.ndarray] | None = None

    def params(self) -> dict[str, Any]:
        """Return the settings that change scores (for manifests)."""
        return {"k1": self.k1, "b": self.b, "method": self.method, **self.tokenizer.params()}

    def __len__(self) -> int:
        """Number of indexed docs."""
        return len(self._docs)

    def add(self, docs: Sequence[Doc]) -> None:
        """Add docs with new ids (ValueError on a duplicate id); only they are tokenized."""
        self.add_tokenized(docs, [self.tokenizer(d.text) for d in docs])

    def add_tokenized(self, docs: Sequence[Doc], tokens: Sequence[list[str]]) -> None:
        """Add docs whose tokens were computed elsewhere with this index's tokenizer params."""
        if len(docs) != len(tokens):
            raise ValueError("docs and token lists must have the same length")
        seen: set[str] = set()
        for doc in docs:
            if doc.id in self._pos or doc.id in seen:
                raise ValueError(f"duplicate doc id {doc.id!r}")
            seen.add(doc.id)
        if not docs:
            return
        cache = self._token_cache()
        for doc in docs:
            self._pos[doc.id] = len(self._docs)
            self._docs.append(doc)
        cache.extend(tokens)
        self._bm25 = None
        self._last = None

    def delete(self, ids: Sequence[str]) -> None:
        """Remove docs by id (unknown ids are ignored); the BM25 matrix is rebuilt lazily.

        No doc is tokenized again: the remaining docs' token ids are kept.
        """
        gone = {self._pos[i] for i in ids if i in self._pos}
        if not gone:
            return
        cache = self._token_cache()
        keep = [n for n in range(len(self._docs)) if n not in gone]
        self._docs = [self._docs[n] for n in keep]
        cache.docs = [cache.docs[n] for n in keep]
        self._pos = {d.id: n for n, d in enumerate(self._docs)}
        self._bm25 = None
        self._last = None

    def subset(self, ids: Sequence[str]) -> BM25Retriever:
        """Return a new index over the docs ``ids`` (KeyError for an unknown id)."""
        out = BM25Retriever(self.tokenizer, k1=self.k1, b=self.b, method=self.method)
        out.add([self._docs[self._pos[i]] for i in ids])
        return out

    def _token_cache(self) -> _TokenCache:
        """Token ids of the current docs (read from disk or re-tokenized once)."""
        if self._tokens is None:
            loaded = _TokenCache.load(self._tokens_dir) if self._tokens_dir else None
            if loaded is None or len(loaded.docs) != len(self._docs):
                loaded = _TokenCache()
                loaded.extend([self.tokenizer(d.text) for d in self._docs])
            self._tokens = loaded
        return self._tokens

    def _engine(self) -> bm25s.BM25 | None:
        """Return the bm25s index (built on demand); None when no doc has a token."""
        if self._bm25 is None:
            cache = self._token_cache()
            if not any(len(d) for d in cache.docs):
                return None
            engine = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
            engine.index(cache.tokenized(), show_progress=False)
            self._bm25 = engine
        return self._bm25

    def scores_all(self, query: str) -> np.ndarray:
        """Return the BM25 score of every doc (in insertion order) for ``query``."""
        if not self._docs:
            return np.zeros(0, dtype=np.float32)
        if self._last is not None and self._last[0] == query:
            return self._last[1]
        tokens = self.tokenizer(query)
        engine = self._engine()
        known = [t for t in tokens if engine is not None and t in engine.vocab_dict]
        if known:
            scores = np.asarray(engine.get_scores(known), dtype=np.float32)  # type: ignore[union-attr]
        else:
            scores = np.zeros(len(self._docs), dtype=np.float32)
        self._last = (query, scores)
        return scores

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """Return up to ``k`` docs with a positive score, best first."""
        scores = self.scores_all(query)
        if k <= 0 or scores.size == 0:
            return []
        top = _top_k(scores, k)
        return [self._hit(int(i), float(scores[i])) for i in top if scores[i] > 0]

    def score(self, query: str, ids: Sequence[str]) -> list[float]:
        """Return the BM25 score of each id (KeyError for an unknown id)."""
        scores = self.scores_all(query)
        return [float(scores[self._pos[i]]) for i in ids]

    def _hit(self, pos: int, score: float) -> Hit:
        doc = self._docs[pos]
        return Hit(id=doc.id, score=score, text=doc.text, metadata=doc.metadata)

    def save(self, path: str | Path) -> None:
        """Write docs (Parquet), parameters (JSON) and the bm25s arrays (``.npy``, no pickle)."""
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        frame = pd.DataFrame(
            {
                "id": [d.id for d in self._docs],
                "text": [d.text for d in self._docs],
                "metadata": [json.dumps(d.metadata) for d in self._docs],
            }
        )
        frame.to_parquet(folder / _DOCS_FILE, index=False, compression="zstd")
        (folder / _PARAMS_FILE).write_text(json.dumps(self.params(), indent=2), encoding="utf-8")
        engine = self._engine() if self._docs else None
        if engine is not None:
            engine.save(str(folder / _BM25_DIR), allow_pickle=False)
        if self._docs:
            self._token_cache().save(folder)

    @classmethod
    def load(cls, path: str | Path, tokenizer: Tokenizer | None = None) -> BM25Retriever:
        """Read an index written by ``save``.

        Raises:
            IndexNotFoundError: If the folder or its files are missing.
        """
        folder = Path(path)
        if not (folder / _DOCS_FILE).is_file() or not (folder / _PARAMS_FILE).is_file():
            raise IndexNotFoundError(folder)
        params = json.loads((folder / _PARAMS_FILE).read_text(encoding="utf-8"))
        tok = tokenizer or Tokenizer(stopwords=params["stopwords"], stem=params["stem"])
        self = cls(tok, k1=params["k1"], b=params["b"], method=params["method"])
        frame = pd.read_parquet(folder / _DOCS_FILE)
        self._docs = [
            Doc(id=i, text=t, metadata=json.loads(m))
            for i, t, m in frame.itertuples(index=False, name=None)
        ]
        self._pos = {d.id: n for n, d in enumerate(self._docs)}
        self._tokens_dir = folder
        if self._docs and (folder / _BM25_DIR).is_dir():
            self._bm25 = bm25s.BM25.load(
                str(folder / _BM25_DIR), allow_pickle=False, show_progress=False
            )
        return self


def _top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest scores, best first (ties by position)."""
    k = min(k, scores.size)
    part = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
    return part[np.lexsort((part, -scores[part]))]
