"""Retrieval nodes: pick the tables, expand the query, fetch schema and cells.

TableRAG (Chen et al., "TableRAG: Million-Token Table Understanding with
Language Models") retrieves columns and cell values of a table too large for
the prompt, using queries the model proposes; small tables skip both steps.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from tablerag_agents.graphs.context import Context
from tablerag_agents.graphs.nodes._common import (
    ResourcesGetter,
    ask,
    context_of,
    parse_json_object,
    progress,
    string_list,
)
from tablerag_agents.graphs.state import State
from tablerag_agents.prompts import load_prompt

from tablerag_agents.errors import UnknownTableError
from tablerag_agents.table_index import build_table_context

_MAX_QUERIES = 5
_COLUMNS_SHOWN = 30


def question_of(state: State) -> str:
    """The question the retrieval and solver stages work on."""
    return state.get("standalone_question") or state.get("question") or ""


def tables_without_search(
    state: State, ctx: Context, resources: ResourcesGetter
) -> list[str] | None:
    """The turn's tables when no search is needed (None: search).

    Given tables win (they stay given on a thread's next turns) and are
    resolved again every turn; with no corpus index, the one table in scope is
    used.

    Raises:
        UnknownTableError: A given table is not one the run may use.
        ValueError: There is nothing to answer over.
    """
    given = list(state.get("tables") or [])
    if given:
        for ref in given:
            resources.table(ref, ctx)  # fail early with a clear error
        return given
    registered = resources.table_ids(ctx)
    if resources.index_dir is not None or len(registered) > 1:
        return None
    if registered:
        return registered
    raise ValueError(
        "no table to answer over: pass `tables` (ids of registered tables), or build the "
        "graph over a corpus index"
    )


def large_tables(refs: list[str], ctx: Context, resources: ResourcesGetter) -> list[str]:
    """The references of tables too large to show row by row."""
    return [ref for ref in refs if resources.table(ref, ctx).n_cells > ctx.large_table_cells]


def make_retrieve_tables(resources: ResourcesGetter) -> Any:
    """Build the ``retrieve_tables`` node (corpus search when no table is given)."""

    def retrieve_tables(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Search the corpus; keep the best table, and close runners-up for joins."""
        ctx = context_of(runtime)
        res = resources()
        question = question_of(state)
        previous = list(state.get("previous_tables") or [])
        corpus = resources.search_corpus(ctx)
        progress(runtime, "retrieve_tables", step="search", k=ctx.top_k_tables)
        model = res.chat_model if ctx.rerank else None
        hits = corpus.search(question, k=max(ctx.top_k_tables, 1), rerank_model=model)
        if not hits:
            raise ValueError("the corpus index has no tables")
        found: list[dict[str, Any]] = [
            {"table_id": h.table_id, "score": float(h.score), "caption": h.caption} for h in hits
        ]
        best = found[0]["score"]
        floor = best - abs(best) * ctx.multi_table_margin
        close = [h["table_id"] for h in found if h["score"] >= floor]
        if previous and previous[0] in close:
            # The conversation is still about the same tables (those the run may still use).
            chosen = [ref for ref in previous if _usable(resources, ref, ctx)]
        else:
            chosen = close[: max(ctx.max_tables, 1)]
        progress(runtime, "retrieve_tables", step="chosen", tables=chosen)
        return {
            "table_ids": chosen,
            "table_hits": found,
            "large_tables": large_tables(chosen, ctx, resources),
        }

    return retrieve_tables


def make_expand_query(resources: ResourcesGetter) -> Any:
    """Build the ``expand_query`` node."""

    def expand_query(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Let the model propose schema queries and cell queries for the question."""
        ctx = context_of(runtime)
        res = resources()
        question = question_of(state)
        main = resources.table(state["large_tables"][0], ctx)
        columns = ", ".join(str(c) for c in main.df.columns[:_COLUMNS_SHOWN])
        prompt = load_prompt("expand_query").format(
            question=question, caption=main.caption or main.id, columns=columns
        )
        progress(runtime, "expand_query", step="ask model")
        parsed = parse_json_object(ask(res.chat_model, prompt)) or {}
        schema = string_list(parsed.get("schema_queries"), _MAX_QUERIES)
        cells = string_list(parsed.get("cell_queries"), _MAX_QUERIES)
        return {"schema_queries": schema or [question], "cell_queries": cells or [question]}

    return expand_query


def make_retrieve_schema_cells(resources: ResourcesGetter) -> Any:
    """Build the ``retrieve_schema_cells`` node."""

    def retrieve_schema_cells(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Answer the queries from each large table's budgeted schema and cell databases."""
        ctx = context_of(runtime)
        res = resources()
        question = question_of(state)
        schema_queries = _with_question(question, state.get("schema_queries"))
        cell_queries = _with_question(question, state.get("cell_queries"))
        retrieved: dict[str, str] = {}
        for ref in state.get("large_tables") or []:
            table = resources.table(ref, ctx)
            progress(runtime, "retrieve_schema_cells", step="index", table=ref)
            index = res.table_index(table, budget=ctx.budget)
            schema = index.search_schema(schema_queries, k=ctx.schema_k)
            cells = index.search_cells(cell_queries, k=ctx.cell_k)
            retrieved[ref] = build_table_context(table, schema, cells)
        return {"retrieved": retrieved}

    return retrieve_schema_cells


def _usable(resources: ResourcesGetter, ref: str, ctx: Context) -> bool:
    """Whether the run may use the table ``ref``."""
    try:
        resources.table(ref, ctx)
    except UnknownTableError:
        return False
    return True


def _with_question(question: str, queries: list[str] | None) -> list[str]:
    """The question first, then the expanded queries (no duplicates)."""
    return [question] + [q for q in queries or [] if q != question]
