"""Token ids of a BM25 index kept as flat arrays, and the bm25s score matrix built from them.

bm25s builds its matrix from Python lists of token ids with per-document
Python loops: at 100k tables the linked-page texts alone hold ~200M tokens, so
the lists take several GB and minutes. :func:`build_score_matrix` builds the
same CSC arrays (bm25s' own score formulas, documents in the same order) with
NumPy, a chunk of documents at a time, holding little besides the result.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
from bm25s.scoring import _build_nonoccurrence_array, _select_idf_scorer, _select_tfc_scorer

from tablerag_agents.errors import MalformedIndexError

_TOKENS_FILE = "tokens.npz"
_VOCAB_FILE = "token_vocab.json"
_CHUNK_TOKENS = 1 << 18
"""Tokens handled at a time while the matrix is built (bounds the temporary arrays)."""


class TokenIds:
    """Token ids of every doc, in insertion order: flat int32 arrays plus per-doc lengths.

    Each :meth:`extend` appends one chunk (no per-doc arrays); ids index
    :attr:`vocab`, assigned in order of first occurrence.
    """

    def __init__(self, vocab: dict[str, int] | None = None) -> None:
        """Create an empty cache over ``vocab`` (a new one by default)."""
        self.vocab: dict[str, int] = vocab if vocab is not None else {}
        self._ids: list[np.ndarray] = []
        self._lengths: list[np.ndarray] = []
        self._n_docs = 0

    def __len__(self) -> int:
        """Number of docs."""
        return self._n_docs

    def extend(self, token_lists: Sequence[Sequence[str]]) -> None:
        """Append docs given as token strings (new tokens get new ids)."""
        vocab = self.vocab
        flat = list(chain.from_iterable(token_lists))
        for token in dict.fromkeys(flat):  # first-occurrence order keeps ids deterministic
            if token not in vocab:
                vocab[token] = len(vocab)
        self.append_ids(
            np.fromiter(map(vocab.__getitem__, flat), dtype=np.int32, count=len(flat)),
            np.fromiter(map(len, token_lists), dtype=np.int64, count=len(token_lists)),
        )

    def append_ids(self, ids: np.ndarray, lengths: np.ndarray) -> None:
        """Append docs given as ids into :attr:`vocab` and per-doc token counts."""
        if int(lengths.sum()) != len(ids):
            raise ValueError(f"lengths sum to {int(lengths.sum())}, not {len(ids)} ids")
        if len(lengths):
            self._ids.append(np.asarray(ids, dtype=np.int32))
            self._lengths.append(np.asarray(lengths, dtype=np.int64))
            self._n_docs += len(lengths)

    def chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield ``(ids, lengths)`` of consecutive runs of docs."""
        return iter(list(zip(self._ids, self._lengths, strict=True)))

    def n_tokens(self) -> int:
        """Tokens over all docs."""
        return sum(len(ids) for ids in self._ids)

    def _flatten(self) -> tuple[np.ndarray, np.ndarray]:
        if len(self._ids) != 1:
            ids = np.concatenate(self._ids) if self._ids else np.zeros(0, np.int32)
            lengths = np.concatenate(self._lengths) if self._lengths else np.zeros(0, np.int64)
            self._ids, self._lengths = ([ids], [lengths]) if len(lengths) else ([], [])
        if not self._ids:
            return np.zeros(0, np.int32), np.zeros(0, np.int64)
        return self._ids[0], self._lengths[0]

    def select(self, positions: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(ids, lengths)`` of the docs at ``positions``, in that order."""
        ids, lengths = self._flatten()
        starts = np.concatenate([[0], np.cumsum(lengths)])
        pos = np.asarray(positions, dtype=np.int64)
        sel = [ids[starts[p] : starts[p + 1]] for p in pos.tolist()]
        flat = np.concatenate(sel) if sel else np.zeros(0, np.int32)
        return flat, lengths[pos] if len(pos) else np.zeros(0, np.int64)

    def keep(self, mask: np.ndarray) -> None:
        """Keep only the docs where ``mask`` (one bool per doc) is true."""
        ids, lengths = self._flatten()
        ids = ids[np.repeat(mask, lengths)]
        lengths = lengths[mask]
        self._ids, self._lengths = ([ids], [lengths]) if len(lengths) else ([], [])
        self._n_docs = len(lengths)

    def save(self, folder: Path) -> None:
        """Write ``tokens.npz`` (flat ids and lengths) and ``token_vocab.json``.

        Uncompressed: zlib took ~11 s per 9M token ids (the linked-page texts of
        4k tables), minutes at 100k tables, for a file ~3x smaller.
        """
        ids, lengths = self._flatten()
        np.savez(folder / _TOKENS_FILE, ids=ids, lengths=lengths)
        (folder / _VOCAB_FILE).write_text(json.dumps(self.vocab), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path) -> TokenIds | None:
        """Read what :meth:`save` wrote (None when the files are absent).

        Raises:
            MalformedIndexError: The files disagree (lengths, ids outside the vocabulary).
        """
        if not (folder / _TOKENS_FILE).is_file() or not (folder / _VOCAB_FILE).is_file():
            return None
        vocab = json.loads((folder / _VOCAB_FILE).read_text(encoding="utf-8"))
        with np.load(folder / _TOKENS_FILE, allow_pickle=False) as data:
            ids, lengths = data["ids"], data["lengths"]
        if (
            not isinstance(vocab, dict)
            or not all(type(v) is int for v in vocab.values())
            or sorted(vocab.values()) != list(range(len(vocab)))
        ):
            raise MalformedIndexError(folder, _VOCAB_FILE, "does not number its tokens 0..n-1")
        if (
            ids.ndim != 1
            or lengths.ndim != 1
            or not np.issubdtype(ids.dtype, np.integer)
            or not np.issubdtype(lengths.dtype, np.integer)
            or (len(lengths) and int(lengths.min()) < 0)
            or int(lengths.sum()) != len(ids)
        ):
            raise MalformedIndexError(
                folder, _TOKENS_FILE, "has lengths that do not sum to its ids"
            )
        if len(ids) and not 0 <= int(ids.min()) <= int(ids.max()) < len(vocab):
            raise MalformedIndexError(folder, _TOKENS_FILE, "has ids outside its vocabulary")
        cache = cls(vocab)
        cache.append_ids(ids, lengths)
        return cache


def build_score_matrix(
    tokens: TokenIds, *, k1: float, b: float, method: str, delta: float = 0.5
) -> tuple[dict[str, Any], np.ndarray | None]:
    """Return bm25s' ``scores`` dict (CSC ``data``/``indices``/``indptr``) and non-occurrence array.

    Equal to what ``bm25s.BM25(k1=k1, b=b, method=method).index`` computes from
    the same token ids and vocabulary (one column per vocabulary id, docs in
    insertion order), in float32 with int32 indices and int64 pointers.
    """
    n_vocab = len(tokens.vocab)
    chunks = list(tokens.chunks())
    doc_len = (
        np.concatenate([lengths for _, lengths in chunks]) if chunks else np.zeros(0, np.int64)
    )
    n_docs = len(doc_len)
    avg_doc_len = doc_len.mean() if n_docs else np.float64(0.0)
    df = np.zeros(n_vocab, dtype=np.int64)
    for _, terms, _tf in _pairs(chunks, n_vocab):
        df += np.bincount(terms, minlength=n_vocab)
    idf_of = _select_idf_scorer(method)
    idf = np.zeros(n_vocab, dtype=np.float32)
    present = np.flatnonzero(df)
    idf[present] = [idf_of(int(d), N=n_docs) for d in df[present].tolist()]
    nonoccurrence = None
    if method in ("bm25l", "bm25+"):
        nonoccurrence = _build_nonoccurrence_array(
            dict(enumerate(df.tolist())),
            n_docs,
            idf_of,
            _select_tfc_scorer(method),
            l_d=avg_doc_len,
            l_avg=avg_doc_len,
            k1=k1,
            b=b,
            delta=delta,
        )
    indptr = np.zeros(n_vocab + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    data = np.empty(int(indptr[-1]), dtype=np.float32)
    indices = np.empty(int(indptr[-1]), dtype=np.int32)
    filled = indptr[:-1].copy()  # next free slot of each column
    tfc_of = _select_tfc_scorer(method)
    for docs, terms, tf in _pairs(chunks, n_vocab):
        tfc = tfc_of(tf_array=tf, l_d=doc_len[docs], l_avg=avg_doc_len, k1=k1, b=b, delta=delta)
        scores = idf[terms] * tfc
        if nonoccurrence is not None:
            scores -= nonoccurrence[terms]
        order = np.argsort(terms, kind="stable")  # by column, docs ascending within one
        terms, docs, scores = terms[order], docs[order], scores[order]
        first = np.searchsorted(terms, terms, side="left")
        slots = filled[terms] + (np.arange(len(terms)) - first)
        indices[slots] = docs
        data[slots] = scores
        filled += np.bincount(terms, minlength=n_vocab)
    return {"data": data, "indices": indices, "indptr": indptr, "num_docs": n_docs}, nonoccurrence


def _pairs(
    chunks: Sequence[tuple[np.ndarray, np.ndarray]], n_vocab: int
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Yield ``(doc, term, tf)`` of every distinct (doc, term) pair, a few million tokens at once.

    Docs are global positions, ascending; within a doc, terms ascend.
    """
    first_doc = 0
    for ids, lengths in chunks:
        starts = np.concatenate([[0], np.cumsum(lengths)])
        doc = 0
        while doc < len(lengths):
            end = int(np.searchsorted(starts, starts[doc] + _CHUNK_TOKENS, side="right")) - 1
            end = max(end, doc + 1)
            local = np.repeat(np.arange(end - doc, dtype=np.int64), lengths[doc:end])
            keys = local * n_vocab + ids[starts[doc] : starts[end]]
            uniq, counts = np.unique(keys, return_counts=True)
            yield (
                (uniq // n_vocab + first_doc + doc).astype(np.int32),
                (uniq % n_vocab).astype(np.int32),
                counts.astype(np.float32),
            )
            doc = end
        first_doc += len(lengths)
