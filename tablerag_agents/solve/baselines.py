"""The table-access baselines of Chen et al. (TableRAG) besides ReadTable.

Each answers with one model call, like :class:`ReadTableSolver` (same prompt,
same answer parsing), but shows the model another view of the main table:

* :class:`ReadSchemaSolver`: column names and types (and a few example values),
  no rows.
* :class:`RandRowSamplingSolver`: rows drawn at random with equal probability
  (seeded), as many as a cell budget allows.
* :class:`RowColRetrievalSolver`: the top-K rows and top-K columns by embedding
  similarity to the question (the semantic filter's ranking), encoding at most
  ``B / 2M`` rows so that at most ``B`` cells are embedded.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd
from langchain_core.embeddings import Embeddings
from langchain_core.runnables import Runnable

from tablerag_agents.retrieval.rows_columns import named_columns, text_scorer, top_rows_columns
from tablerag_agents.solve.base import SolverContext
from tablerag_agents.solve.preview import clean_numbers
from tablerag_agents.solve.read_table import ReadTableSolver, fit_rows
from tablerag_agents.table_index.cells import DEFAULT_BUDGET
from tablerag_agents.table_index.schema import build_schema

logger = logging.getLogger(__name__)

BASELINE_NAMES: tuple[str, ...] = ("read_schema", "rand_row_sampling", "row_col_retrieval")
"""Names of the baselines defined here (ReadTable is ``read_table``)."""


class ReadSchemaSolver(ReadTableSolver):
    """Baseline ReadSchema: the model sees the columns (name, type, examples), no rows.

    Numeric text columns (``"7,169"``) are typed as numbers first, so the types
    say what the column holds.

    Args:
        model: Chat model.
        examples: Most frequent values shown per column (0: names and types only).
        **kwargs: Options of :class:`ReadTableSolver` (``context_tokens``, ``prompt``...).
    """

    name = "read_schema"

    def __init__(self, model: Runnable[Any, Any], *, examples: int = 3, **kwargs: Any) -> None:
        """Store the model and how many example values to show."""
        super().__init__(model, **kwargs)
        if examples < 0:
            raise ValueError(f"examples must be >= 0, got {examples}")
        self.examples = examples

    def table_text(self, ctx: SolverContext, budget_tokens: int) -> tuple[str, bool]:
        """One line per column: ``- name (type): e.g. v1, v2, v3``."""
        schema = build_schema(
            clean_numbers(ctx.main_df),
            max_examples=self.examples,
            max_value_chars=self.max_cell_chars,
        )
        lines = ["Columns of the table (its rows are not shown):"]
        for entry in schema:
            shown = f": e.g. {', '.join(entry.examples)}" if entry.examples else ""
            lines.append(f"- {entry.column} ({entry.dtype}){shown}")
        return "\n".join(lines), False


class RandRowSamplingSolver(ReadTableSolver):
    """Baseline RandRowSampling: rows drawn at random, up to ``budget`` cells.

    Every row has the same chance; the sample is kept in table order and is the
    same for the same table and ``seed``. The prompt says how many rows of how
    many are shown. The rows are then fitted to the context window like ReadTable.

    Args:
        model: Chat model.
        budget: Cells shown at most (rows = ``budget // columns``, at least one).
        seed: Seed of the sample.
        **kwargs: Options of :class:`ReadTableSolver`.
    """

    name = "rand_row_sampling"

    def __init__(
        self,
        model: Runnable[Any, Any],
        *,
        budget: int = DEFAULT_BUDGET,
        seed: int = 0,
        **kwargs: Any,
    ) -> None:
        """Store the model, the cell budget and the seed."""
        super().__init__(model, **kwargs)
        if budget < 1:
            raise ValueError(f"budget must be >= 1 cell, got {budget}")
        self.budget = budget
        self.seed = seed

    def sample_rows(self, df: pd.DataFrame) -> list[int]:
        """Positions of the sampled rows, ascending."""
        n = min(len(df), max(1, self.budget // max(1, df.shape[1])))
        if n >= len(df):
            return list(range(len(df)))
        rng = np.random.default_rng(self.seed)
        return sorted(int(i) for i in rng.choice(len(df), size=n, replace=False))

    def table_text(self, ctx: SolverContext, budget_tokens: int) -> tuple[str, bool]:
        """The sampled rows (with a note when they are not all the rows)."""
        df = ctx.main_df
        rows = self.sample_rows(df)
        text, cut = fit_rows(df.iloc[rows], budget_tokens, self.max_cell_chars, ctx.table_format)
        if len(rows) < len(df):
            text += f"\n({len(rows)} of {len(df)} rows, chosen at random)"
        return text, cut


class RowColRetrievalSolver(ReadTableSolver):
    """Baseline RowColRetrieval: the K rows and K columns closest to the question.

    Rows and columns are embedded and ranked by cosine similarity to the
    question (:mod:`~tablerag_agents.retrieval.rows_columns`, as the semantic
    filter ranks them); columns the question names are kept too. Only the first
    ``budget / (2 * columns)`` rows are encoded, so at most ``budget`` cells are
    embedded (rows and columns each cover every encoded cell once).

    Args:
        model: Chat model.
        embeddings: Embeddings for rows, columns and the question.
        top_k: Rows kept and columns kept (a K x K sub-table).
        budget: Cell encoding budget ``B``.
        **kwargs: Options of :class:`ReadTableSolver`.
    """

    name = "row_col_retrieval"

    def __init__(
        self,
        model: Runnable[Any, Any],
        embeddings: Embeddings,
        *,
        top_k: int = 5,
        budget: int = DEFAULT_BUDGET,
        **kwargs: Any,
    ) -> None:
        """Store the model, the embeddings, K and the encoding budget."""
        super().__init__(model, **kwargs)
        if top_k < 1 or budget < 1:
            raise ValueError(f"top_k and budget must be >= 1, got {top_k}, {budget}")
        self.embeddings = embeddings
        self.top_k = top_k
        self.budget = budget

    def encoded_rows(self, df: pd.DataFrame) -> int:
        """How many leading rows are encoded: ``B / 2M``, at least one."""
        return max(1, self.budget // (2 * max(1, df.shape[1])))

    def table_text(self, ctx: SolverContext, budget_tokens: int) -> tuple[str, bool]:
        """The retrieved sub-table (with a note of what it is)."""
        df = ctx.main_df
        if df.empty or df.shape[1] == 0:
            return super().table_text(ctx, budget_tokens)
        encoded = df.head(self.encoded_rows(df))
        score = text_scorer(ctx.question, self.embeddings)
        try:
            rows, columns = top_rows_columns(encoded, score, self.top_k, self.top_k)
        except Exception as exc:  # noqa: BLE001 - a failing embedding call shows every row
            logger.warning("%s: ranking failed, all encoded rows shown: %s", self.name, exc)
            sub = encoded
        else:
            names = [str(c) for c in encoded.columns]
            wanted = {*columns, *named_columns(ctx.question, names)}
            sub = encoded.iloc[rows, [i for i, c in enumerate(names) if c in wanted]]
        text, cut = fit_rows(sub, budget_tokens, self.max_cell_chars, ctx.table_format)
        if sub.shape != df.shape:
            text += (
                f"\n({len(sub)} of {len(df)} rows and {sub.shape[1]} of {df.shape[1]} "
                "columns, those closest to the question)"
            )
        return text, cut


def make_reader(
    name: str,
    model: Runnable[Any, Any],
    *,
    embeddings: Embeddings | None = None,
    **options: Any,
) -> ReadTableSolver:
    """Create the reading solver ``name`` (ReadTable or a baseline) with ``options``.

    Raises:
        ValueError: For an unknown name, or ``row_col_retrieval`` without embeddings.
        TypeError: For an option the solver does not take.
    """
    if name == "read_table":
        return ReadTableSolver(model, **options)
    if name == "read_schema":
        return ReadSchemaSolver(model, **options)
    if name == "rand_row_sampling":
        return RandRowSamplingSolver(model, **options)
    if name == "row_col_retrieval":
        if embeddings is None:
            raise ValueError("the 'row_col_retrieval' solver needs embeddings")
        return RowColRetrievalSolver(model, embeddings, **options)
    known = ", ".join(("read_table", *BASELINE_NAMES))
    raise ValueError(f"unknown reading solver {name!r}; choose from {known}")
