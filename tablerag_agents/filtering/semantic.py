"""Semantic filter (Wu, TableRAG): keep the rows and columns most similar to the question.

Each row is serialised as ``"col: value; col: value"`` and each column as its
header and a few values; both are scored against the question, either by the
cosine of pooled embeddings (``dense``) or by ColBERT-style late interaction
(``maxsim``, the scorer of :mod:`tablerag_agents.retrieval.colbert`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd
from langchain_core.embeddings import Embeddings

from tablerag_agents.filtering.base import Meter, SubTable, check_table, column_names, named_columns
from tablerag_agents.retrieval.colbert import (
    TokenEncoder,
    maxsim,
    sentence_transformer_token_encoder,
)

logger = logging.getLogger(__name__)

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
    cols = column_names(df)
    out = []
    for row in df.itertuples(index=False, name=None):
        parts = [f"{c}: {_cell(v)}" for c, v in zip(cols, row, strict=True) if _cell(v)]
        out.append("; ".join(parts))
    return out


def column_texts(df: pd.DataFrame, values: int = COLUMN_VALUES) -> list[str]:
    """One ``"header: v1, v2, v3"`` text per column (its first distinct non-empty values)."""
    out = []
    for pos, name in enumerate(column_names(df)):
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
    return np.asarray([maxsim(mats[0], m) for m in mats[1:]], dtype=np.float32)


def _top(scores: np.ndarray, k: int) -> list[int]:
    """Positions of the ``k`` best scores (ties: earlier first)."""
    order = np.argsort(-scores, kind="stable")[: max(k, 0)]
    return sorted(int(i) for i in order)


def semantic_filter(
    question: str,
    df: pd.DataFrame,
    embeddings: Embeddings,
    *,
    top_rows: int = 10,
    top_columns: int = 8,
    scorer: Literal["dense", "maxsim"] = "dense",
    token_encoder: TokenEncoder | None = None,
) -> SubTable:
    """Keep the ``top_rows`` rows and ``top_columns`` columns most similar to ``question``.

    Every column is kept when the table has at most ``top_columns``; columns
    whose name the question contains are always kept.

    Args:
        question: The question.
        df: The table (not empty).
        embeddings: LangChain embeddings (dense scorer; for ``maxsim`` without
            ``token_encoder`` it must expose a sentence-transformers ``.model``).
        top_rows: Rows to keep.
        top_columns: Columns to keep.
        scorer: ``dense`` (cosine of pooled vectors) or ``maxsim`` (late interaction).
        token_encoder: Per-token encoder for ``maxsim`` (default: from ``embeddings``).

    Raises:
        ValueError: On an empty table, an unknown scorer, ``top_rows`` or
            ``top_columns`` below 1, or ``maxsim`` without a way to get token vectors.
    """
    check_table(df)
    if top_rows < 1 or top_columns < 1:
        raise ValueError(f"top_rows and top_columns must be >= 1, got {top_rows}, {top_columns}")
    meter = Meter()
    method = f"semantic:{scorer}"
    if scorer == "maxsim":
        if token_encoder is None:
            if getattr(embeddings, "model", None) is None:
                raise ValueError("maxsim needs token_encoder= or embeddings with a .model")
            token_encoder = sentence_transformer_token_encoder(embeddings)
        encoder = token_encoder

        def score(texts: Sequence[str]) -> np.ndarray:
            return _maxsim_scores(encoder, question, texts)
    elif scorer == "dense":

        def score(texts: Sequence[str]) -> np.ndarray:
            return _dense_scores(embeddings, question, texts)
    else:
        raise ValueError(f"unknown scorer {scorer!r}: use 'dense' or 'maxsim'")

    cols = column_names(df)
    named = named_columns(question, cols)
    try:
        rows = list(range(len(df))) if len(df) <= top_rows else _top(score(row_texts(df)), top_rows)
        if len(cols) <= top_columns:
            keep_cols = cols
        else:
            best = _top(score(column_texts(df)), top_columns)
            keep_cols = [cols[i] for i in best]
    except Exception as exc:  # noqa: BLE001 - a failing embedding call degrades to no filter
        logger.warning("semantic filter failed, keeping the whole table: %s", exc)
        return SubTable.whole(df, method, f"scoring failed: {type(exc).__name__}: {exc}")
    detail = {"named_columns": named, "rows_in": len(df), "columns_in": len(cols)}
    return SubTable.select(df, rows, [*keep_cols, *named], method, detail=detail, **meter.fields())
