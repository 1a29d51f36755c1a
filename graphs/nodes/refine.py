"""Nodes that narrow and explain the tables before solving: filters and clarifiers.

The filters follow "TableRAG" by Wu et al. (semantic filter, LLM filter with
self-consistency) and "PieTa: divide-and-conquer sub-table selection"; the
clarifiers (term explanations, a Wikipedia summary of the table's topic)
follow Wu et al. too. Every one is optional, switched on in the Context.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from tablerag_agents.graphs.context import Context
from tablerag_agents.graphs.nodes._common import ResourcesGetter, context_of, progress
from tablerag_agents.graphs.nodes.retrieve import question_of
from tablerag_agents.graphs.state import State


def make_filter(resources: ResourcesGetter) -> Any:
    """Build the ``filter`` node."""

    def filter_tables(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Keep the rows and columns each table needs, by the filter the Context names."""
        from tablerag_agents import filtering
        from tablerag_agents.filtering.pieta import cuts_rows

        ctx = context_of(runtime)
        res = resources()
        question = question_of(state)
        sub_tables: dict[str, dict[str, Any]] = {}
        for ref in state.get("table_ids") or []:
            table = resources.table(ref, ctx)
            if table.n_cells <= ctx.filter_min_cells:
                continue
            progress(runtime, "filter", step=ctx.filter, table=ref)
            if ctx.filter in ("semantic", "semantic_maxsim"):
                sub = filtering.semantic_filter(
                    question,
                    table.df,
                    res.embeddings,
                    top_rows=ctx.filter_rows,
                    top_columns=ctx.filter_columns,
                    scorer="maxsim" if ctx.filter == "semantic_maxsim" else "dense",
                )
            elif ctx.filter == "llm":
                sub = filtering.llm_filter(
                    question,
                    table.df,
                    res.chat_model,
                    res.sandbox,
                    samples=ctx.filter_samples,
                    vote=ctx.filter_vote,
                )
            elif ctx.filter == "pieta":
                sub = filtering.pieta_filter(
                    question,
                    table.df,
                    res.chat_model,
                    max_windows=ctx.pieta_max_windows or None,
                    # Only a table PieTa cuts needs them: don't load the model for a small one.
                    embeddings=res.embeddings if cuts_rows(table.df) else None,
                )
            else:
                raise ValueError(f"unknown filter {ctx.filter!r}")
            sub_tables[ref] = sub.model_dump(include={"rows", "columns", "method", "fallback"})
        return {"sub_tables": sub_tables}

    filter_tables.__name__ = "filter"
    return filter_tables


def make_clarify(resources: ResourcesGetter) -> Any:
    """Build the ``clarify`` node."""

    def clarify(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Explain the question's terms and fetch a Wikipedia summary of the table's topic."""
        from tablerag_agents import clarify as clarifiers

        ctx = context_of(runtime)
        res = resources()
        question = question_of(state)
        main = resources.table(state["table_ids"][0], ctx)
        headers = [str(c) for c in main.df.columns]
        update: dict[str, Any] = {}
        if ctx.clarify_terms:
            progress(runtime, "clarify", step="terms")
            found = clarifiers.clarify_terms(
                question, headers, res.chat_model, caption=main.caption
            )
            update["clarifications"] = found.text
        if ctx.wikipedia:
            progress(runtime, "clarify", step="wikipedia")
            page = clarifiers.table_summary(main.caption, headers, res.wikipedia)
            update["wiki"] = page.model_dump() if page is not None else None
        return update

    return clarify
