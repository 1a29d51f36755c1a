"""Row and column retrieval in one table: the rows and columns closest to a question.

Each row is serialised as ``"col: value; col: value"`` and each column as its
header and a few values; both are scored against the question, either by the
cosine of pooled embeddings (``dense``) or by ColBERT-style late interaction
(``maxsim``, the scorer of :mod:`tablerag_agents.retrieval.colbert`). Columns the
question names are found by name (:func:`named_columns`). The semantic filter and
the RowColRetrieval baseline both rank this way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
import pandas as pd
from langchain_core.embeddings import Embeddings

from tablerag_agents.retrieval.colbert import (
    TokenEncoder,
    maxsim_each,
    sentence_transformer_token_encoder,
)

Scorer = Literal["dense", "maxsim"]
TextScores = Callable[[Sequence[str]], np.ndarray]
"""Scores of texts against the question, one per text."""

CELL_CHARS = 80
"""Longer cells are cut in the texts that get embedded."""
COLUMN_VALUES = 3
"""Distinct values shown with a column header."""


def _cell(value: object) -> str:
    text = "" if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)
    text = " ".join(text.split())
    return text if len(text) <= CELL_CHARS else text[:CELL_CHARS]


def row_texts(df: pd.DataFrame) -> list[str]:
    """One ``"col: value; col: value"`` text per row (empty cells left out)."""
    cols = [str(c) for c in df.columns]
    out = []
    for row in df.itertuples(index=False, name=None):
        parts = [f"{c}: {_cell(v)}" for c, v in zip(cols, row, strict=True) if _cell(v)]
        out.append("; ".join(parts))
    return out


def column_texts(df: pd.DataFrame, values: int = COLUMN_VALUES) -> list[str]:
    """One ``"header: v1, v2, v3"`` text per column (its first distinct non-empty values)."""
    out = []
    for pos, name in enumerate(str(c) for c in df.columns):
        seen: dict[str, None] = {}
        for value in df.iloc[:, pos].tolist():
            text = _cell(value)
            if text:
                seen.setdefault(text)
            if len(seen) >= values:
                break
        out.append(f"{name}: {', '.join(seen)}" if seen else name)
    return out


def _dense_scores(embeddings: Embeddings, question: str, texts: Sequence[str]) -> np.ndarray:
    query = np.asarray(embeddings.embed_query(question), dtype=np.float32)
    docs = np.asarray(embeddings.embed_documents(list(texts)), dtype=np.float32)
    if docs.ndim != 2 or docs.shape[0] != len(texts) or docs.shape[1] != query.shape[0]:
        raise ValueError(f"embeddings returned shape {docs.shape} for {len(texts)} texts")
    norms = np.linalg.norm(docs, axis=1) * (np.linalg.norm(query) or 1.0)
    norms[norms == 0] = 1.0
    return (docs @ query) / norms  # type: ignore[no-any-return]


def _maxsim_scores(encoder: TokenEncoder, question: str, texts: Sequence[str]) -> np.ndarray:
    mats = encoder([question, *texts])
    return np.asarray(maxsim_each(mats[0], mats[1:]), dtype=np.float32)


def text_scorer(
    question: str,
    embeddings: Embeddings,
    scorer: Scorer = "dense",
    token_encoder: TokenEncoder | None = None,
) -> TextScores:
    """Score texts against ``question`` with ``scorer``; nothing is embedded until called.

    Args:
        question: The question.
        embeddings: LangChain embeddings (dense scorer; for ``maxsim`` without
            ``token_encoder`` it must expose a sentence-transformers ``.model``).
        scorer: ``dense`` (cosine of pooled vectors) or ``maxsim`` (late interaction).
        token_encoder: Per-token encoder for ``maxsim`` (default: from ``embeddings``).

    Raises:
        ValueError: On an unknown scorer, or ``maxsim`` without a way to get token vectors.
    """
    if scorer == "maxsim":
        if token_encoder is None:
            if getattr(embeddings, "model", None) is None:
                raise ValueError("maxsim needs token_encoder= or embeddings with a .model")
            token_encoder = sentence_transformer_token_encoder(embeddings)
        encoder = token_encoder
        return lambda texts: _maxsim_scores(encoder, question, texts)
    if scorer == "dense":
        return lambda texts: _dense_scores(embeddings, question, texts)
    raise ValueError(f"unknown scorer {scorer!r}: use 'dense' or 'maxsim'")


def _top(scores: np.ndarray, k: int) -> list[int]:
    """Positions of the ``k`` best scores (ties: earlier first), ascending."""
    order = np.argsort(-scores, kind="stable")[: max(k, 0)]
    return sorted(int(i) for i in order)


def top_rows_columns(
    df: pd.DataFrame, score: TextScores, top_rows: int, top_columns: int
) -> tuple[list[int], list[str]]:
    """Positions of the ``top_rows`` best rows and names of the ``top_columns`` best columns.

    Every row (column) when the table has no more than that; both in table order.
    Errors of ``score`` (a failing embedding call) propagate.
    """
    cols = [str(c) for c in df.columns]
    rows = list(range(len(df))) if len(df) <= top_rows else _top(score(row_texts(df)), top_rows)
    if len(cols) <= top_columns:
        return rows, cols
    return rows, [cols[i] for i in _top(score(column_texts(df)), top_columns)]


def named_columns(question: str, columns: Sequence[str]) -> list[str]:
    """Columns whose whole name appears in the question (case-insensitive, as a phrase)."""
    text = question.lower()
    found = []
    for col in columns:
        name = " ".join(col.lower().split())
        if not name.strip():
            continue
        # Word boundaries only where the name starts/ends with a word character.
        head = r"(?<!\w)" if name[0].isalnum() else ""
        tail = r"(?!\w)" if name[-1].isalnum() else ""
        if re.search(head + re.escape(name).replace(r"\ ", r"\s+") + tail, text):
            found.append(col)
    return found
