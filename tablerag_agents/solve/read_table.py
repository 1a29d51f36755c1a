"""ReadTable baseline (Chen et al., TableRAG): the whole table in the prompt, answered directly."""

from __future__ import annotations

import logging
from typing import Any

import pandas as pd
from langchain_core.messages import HumanMessage
from langchain_core.runnables import Runnable

from tablerag_agents.models.calls import call_model
from tablerag_agents.models.tokens import count_tokens
from tablerag_agents.prompts import load_prompt
from tablerag_agents.solve.base import SolverContext, SolverResult, as_context
from tablerag_agents.solve.llm_calls import RunRecorder
from tablerag_agents.solve.parsing import clean_answer, parse_react
from tablerag_agents.solve.preview import rows_text
from tablerag_agents.tables.render import TableFormat

logger = logging.getLogger(__name__)


def fit_rows(
    df: pd.DataFrame, budget_tokens: int, max_chars: int, fmt: TableFormat = "markdown"
) -> tuple[str, bool]:
    """Render ``df``, dropping trailing rows only if it exceeds the budget.

    Returns:
        The text and whether rows were dropped.
    """
    full = rows_text(df, fmt, max_chars=max_chars)
    if count_tokens(full) <= budget_tokens:
        return full, False
    low, high = 0, len(df)  # the most rows that fit lies in [low, high)
    while high - low > 1:
        mid = (low + high) // 2
        if count_tokens(rows_text(df, fmt, max_rows=mid, max_chars=max_chars)) <= budget_tokens:
            low = mid
        else:
            high = mid
    note = f"(table truncated: first {low} of {len(df)} rows shown)"
    return f"{rows_text(df, fmt, max_rows=low, max_chars=max_chars)}\n{note}", True


class ReadTableSolver:
    """Baseline: put the whole table (markdown) in the prompt and ask for the answer.

    Args:
        model: Chat model.
        context_tokens: Context window of the model; the table is cut only when
            the prompt would not fit (``result.truncated`` then says so).
        reserve_tokens: Tokens kept free for the instructions and the answer.
        max_cell_chars: Longer cells are shortened.
        prompt: Prompt file: ``read_table`` (a short answer) or
            ``read_table_sentence`` (a one-sentence answer).

    Subclasses show another view of the table by overriding :meth:`table_text`
    (see :mod:`tablerag_agents.solve.baselines`).
    """

    name = "read_table"

    def __init__(
        self,
        model: Runnable[Any, Any],
        *,
        context_tokens: int = 8192,
        reserve_tokens: int = 700,
        max_cell_chars: int = 100,
        prompt: str = "read_table",
    ) -> None:
        """Store the model and the prompt budget."""
        self.model = model
        self.context_tokens = context_tokens
        self.reserve_tokens = reserve_tokens
        self.max_cell_chars = max_cell_chars
        self.prompt = prompt

    def solve(self, question: str | SolverContext, df: pd.DataFrame | None = None) -> SolverResult:
        """Answer ``question`` by reading the main table of the context."""
        ctx = as_context(question, df)
        rec = RunRecorder(self.name, ctx)
        budget = self.context_tokens - self.reserve_tokens - count_tokens(ctx.question)
        # The token count is an estimate: keep a 15% margin for the model's tokenizer.
        notes = _notes(ctx)
        budget -= count_tokens(notes)
        table, truncated = self.table_text(ctx, int(budget * 0.85))
        title = f"Title: {ctx.caption}\n" if ctx.caption else ""
        title += f"{notes}\n" if notes else ""
        prompt = load_prompt(self.prompt).format(title=title, table=table, question=ctx.question)
        reply = call_model(self.model, [HumanMessage(prompt)])
        step = parse_react(reply.text)
        final = step.final_answer or clean_answer(reply.text)
        rec.add(reply, action="answer", thought=step.thought)
        items = [p.strip() for p in final.split("|") if p.strip()]
        return rec.finish(items, iterations=1, truncated=truncated)

    def table_text(self, ctx: SolverContext, budget_tokens: int) -> tuple[str, bool]:
        """The main table as shown in the prompt, and whether rows had to be dropped.

        Args:
            ctx: The question's context.
            budget_tokens: Tokens the table text may take.
        """
        table, truncated = fit_rows(
            ctx.main_df, budget_tokens, self.max_cell_chars, ctx.table_format
        )
        if truncated:
            logger.warning("%s: table cut to fit %d tokens", self.name, self.context_tokens)
        return table, truncated


def _notes(ctx: SolverContext) -> str:
    """What earlier stages found (schema, cells, filtered rows, term notes), as text."""
    parts = []
    if ctx.schema_text:
        parts.append(f"Schema:\n{ctx.schema_text.strip()}")
    if ctx.retrieved_cells:
        parts.append(f"Relevant cells:\n{ctx.retrieved_cells.strip()}")
    if ctx.sub_table is not None and not ctx.sub_table.empty:
        rows = rows_text(ctx.sub_table, ctx.table_format, max_rows=20, max_chars=40, index=True)
        parts.append(f"Relevant rows:\n{rows}")
    if ctx.clarifications:
        parts.append(f"Notes on terms:\n{ctx.clarifications.strip()}")
    return "\n".join(parts)
