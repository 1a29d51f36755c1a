"""Semantic filter (Wu, TableRAG): keep the rows and columns most similar to the question.

Rows and columns are ranked by row and column retrieval
(:mod:`tablerag_agents.retrieval.rows_columns`): the cosine of pooled embeddings
(``dense``) or ColBERT-style late interaction (``maxsim``). Columns the question
names are always kept; a failing embedding call keeps the whole table.
"""

from __future__ import annotations

import logging

import pandas as pd
from langchain_core.embeddings import Embeddings

from tablerag_agents.filtering.base import Meter, SubTable, check_table, column_names
from tablerag_agents.retrieval.colbert import TokenEncoder
from tablerag_agents.retrieval.rows_columns import (
    Scorer,
    named_columns,
    text_scorer,
    top_rows_columns,
)

logger = logging.getLogger(__name__)


def semantic_filter(
    question: str,
    df: pd.DataFrame,
    embeddings: Embeddings,
    *,
    top_rows: int = 10,
    top_columns: int = 8,
    scorer: Scorer = "dense",
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
    score = text_scorer(question, embeddings, scorer, token_encoder)
    cols = column_names(df)
    named = named_columns(question, cols)
    try:
        rows, keep_cols = top_rows_columns(df, score, top_rows, top_columns)
    except Exception as exc:  # noqa: BLE001 - a failing embedding call degrades to no filter
        logger.warning("semantic filter failed, keeping the whole table: %s", exc)
        return SubTable.whole(df, method, f"scoring failed: {type(exc).__name__}: {exc}")
    detail = {"named_columns": named, "rows_in": len(df), "columns_in": len(cols)}
    return SubTable.select(df, rows, [*keep_cols, *named], method, detail=detail, **meter.fields())
