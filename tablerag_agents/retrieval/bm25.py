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

from tablerag_agents.errors import IndexNotFoundError, MalformedIndexError
from tablerag_agents.retrieval.base import Doc, Hit, Retriever
from tablerag_agents.retrieval.bm25_matrix import TokenIds, build_score_matrix
from tablerag_agents.retrieval.tokenize import Tokenizer

logger = logging.getLogger(__name__)
# bm25s forces its logger to DEBUG on import; let the application's logging config decide.
logging.getLogger("bm25s").setLevel(logging.NOTSET)

_DOCS_FILE = "docs.parquet"
_PARAMS_FILE = "bm25.json"
_BM25_DIR = "bm25s"


class BM25Retriever(Retriever):
    """Okapi BM25 over docs tokenized by ``Tokenizer`` (stopwords, Snowball stems).

    Docs can be added at any time; the BM25 matrix is rebuilt lazily on the
    next search (bm25s cannot append). Docs that share no term with the query
    score 0 and are not returned, so a search may give fewer than ``k`` hits.
    With ``store_texts=False`` only ids, metadata and token ids are kept (hits
    carry an empty text): what a corpus of long texts needs in memory.
    """

    name = "bm25"

    def __init__(
        self,
        tokenizer: Tokenizer | None = None,
        *,
        k1: float = 1.5,
        b: float = 0.75,
        method: str = "lucene",
        store_texts: bool = True,
    ) -> None:
        """Create an empty index with BM25 parameters ``k1``, ``b`` and bm25s ``method``."""
        self.tokenizer = tokenizer or Tokenizer()
        self.k1, self.b, self.method = k1, b, method
        self.store_texts = store_texts
        self._docs: list[Doc] = []
        self._pos: dict[str, int] = {}
        self._bm25: bm25s.BM25 | None = None
        self._tokens: TokenIds | None = None  # built on first need
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
            self._docs.append(doc if self.store_texts else Doc(doc.id, "", doc.metadata))
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
        mask = np.ones(len(cache), dtype=bool)
        mask[list(gone)] = False
        cache.keep(mask)
        self._pos = {d.id: n for n, d in enumerate(self._docs)}
        self._bm25 = None
        self._last = None

    def subset(self, ids: Sequence[str]) -> BM25Retriever:
        """Return a new index over the docs ``ids`` (KeyError for an unknown id).

        The docs' token ids are copied (nothing is tokenized again).
        """
        out = BM25Retriever(
            self.tokenizer, k1=self.k1, b=self.b, method=self.method, store_texts=self.store_texts
        )
        positions = [self._pos[i] for i in ids]
        token_ids, lengths = self._token_cache().select(positions)
        used, compact = np.unique(token_ids, return_inverse=True)
        words = list(self._token_cache().vocab)
        out._tokens = TokenIds({words[t]: n for n, t in enumerate(used.tolist())})
        out._tokens.append_ids(compact.astype(np.int32), lengths)
        out._docs = [self._docs[p] for p in positions]
        out._pos = {d.id: n for n, d in enumerate(out._docs)}
        return out

    def _token_cache(self) -> TokenIds:
        """Token ids of the current docs (read from disk or re-tokenized once)."""
        if self._tokens is None:
            loaded = TokenIds.load(self._tokens_dir) if self._tokens_dir else None
            if loaded is None or len(loaded) != len(self._docs):
                loaded = TokenIds()
                loaded.extend([self.tokenizer(text) for text in self._saved_texts()])
            self._tokens = loaded
        return self._tokens

    def _saved_texts(self) -> list[str]:
        """The docs' texts, for tokenizing: kept in memory, or read back from the saved docs.

        Raises:
            MalformedIndexError: The index was saved without texts and its token ids
                are missing or do not match its docs.
        """
        if self.store_texts or self._tokens_dir is None:
            return [d.text for d in self._docs]
        folder = self._tokens_dir
        params = json.loads((folder / _PARAMS_FILE).read_text(encoding="utf-8"))
        if not params.get("texts", True):
            raise MalformedIndexError(folder, "tokens.npz", "is missing or does not match its docs")
        texts = pd.read_parquet(folder / _DOCS_FILE, columns=["text"])["text"].tolist()
        if len(texts) != len(self._docs):
            raise MalformedIndexError(folder, _DOCS_FILE, "changed since the index was loaded")
        return texts

    def _engine(self) -> bm25s.BM25 | None:
        """Return the bm25s index (built on demand); None when no doc has a token."""
        if self._bm25 is None:
            cache = self._token_cache()
            if not cache.n_tokens():
                return None
            self._bm25 = _engine_from(cache, self.k1, self.b, self.method)
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
        params = {**self.params(), "texts": self.store_texts}
        (folder / _PARAMS_FILE).write_text(json.dumps(params, indent=2), encoding="utf-8")
        engine = self._engine() if self._docs else None
        if engine is not None:
            engine.save(str(folder / _BM25_DIR), allow_pickle=False)
        if self._docs:
            self._token_cache().save(folder)

    @classmethod
    def load(
        cls, path: str | Path, tokenizer: Tokenizer | None = None, *, store_texts: bool = True
    ) -> BM25Retriever:
        """Read an index written by ``save`` (``store_texts=False``: without the texts).

        Raises:
            IndexNotFoundError: If the folder or its files are missing.
        """
        folder = Path(path)
        if not (folder / _DOCS_FILE).is_file() or not (folder / _PARAMS_FILE).is_file():
            raise IndexNotFoundError(folder)
        params = json.loads((folder / _PARAMS_FILE).read_text(encoding="utf-8"))
        tok = tokenizer or Tokenizer(stopwords=params["stopwords"], stem=params["stem"])
        kept = store_texts and params.get("texts", True)
        self = cls(tok, k1=params["k1"], b=params["b"], method=params["method"], store_texts=kept)
        columns = ["id", "text", "metadata"] if kept else ["id", "metadata"]
        frame = pd.read_parquet(folder / _DOCS_FILE, columns=columns)
        if not kept:
            frame.insert(1, "text", "")
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


def _engine_from(tokens: TokenIds, k1: float, b: float, method: str) -> bm25s.BM25:
    """A bm25s index over ``tokens``, as ``bm25s.BM25.index`` builds it (see bm25_matrix)."""
    engine = bm25s.BM25(k1=k1, b=b, method=method)
    engine.scores, engine.nonoccurrence_array = build_score_matrix(
        tokens, k1=k1, b=b, method=method, delta=engine.delta
    )
    engine.vocab_dict = dict(tokens.vocab)
    engine.vocab_dict.setdefault("", len(tokens.vocab))  # bm25s adds an empty token
    engine.unique_token_ids_set = set(engine.vocab_dict.values())
    return engine


def _top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest scores, best first (ties by position)."""
    k = min(k, scores.size)
    part = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
    return part[np.lexsort((part, -scores[part]))]
