"""The TableRAG graph: question -> tables -> schema/cells -> filter -> clarify -> solve -> answer.

Every stage after ``prepare`` is skipped when it has nothing to do: a given
small table goes straight to ``solve``; query expansion and schema/cell
retrieval run only for tables too large for the prompt; the filter and the
clarifiers run only when the :class:`Context` switches them on. When the
solver produces no value, the next untried solver of ``retry_solvers`` runs.

``graph`` (compiled without a checkpointer, for LangGraph Studio and the
server) uses the process-wide :func:`~tablerag_agents.resources.default_resources`;
:func:`build_graph` takes your own resources and checkpointer.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from tablerag_agents.graphs.context import Context
from tablerag_agents.graphs.nodes._common import ResourcesGetter, context_of
from tablerag_agents.graphs.nodes.answer import make_answer
from tablerag_agents.graphs.nodes.prepare import make_prepare
from tablerag_agents.graphs.nodes.refine import make_clarify, make_filter
from tablerag_agents.graphs.nodes.retrieve import (
    make_expand_query,
    make_retrieve_schema_cells,
    make_retrieve_tables,
)
from tablerag_agents.graphs.nodes.solve import make_solve, next_solver
from tablerag_agents.graphs.state import InputState, OutputState, State
from tablerag_agents.graphs.tracing import traced

from tablerag_agents.resources import Resources, default_resources

TableRAGGraph: TypeAlias = CompiledStateGraph[State, Context, InputState, OutputState]
"""The compiled graph: it takes an :class:`InputState` and a :class:`Context`."""

AfterTables = Literal["expand_query", "retrieve_schema_cells", "filter", "clarify", "solve"]


def _after_schema(state: State, ctx: Context) -> Literal["filter", "clarify", "solve"]:
    if ctx.filter != "none":
        return "filter"
    return _after_filter(state, ctx)


def _after_filter(state: State, ctx: Context) -> Literal["clarify", "solve"]:
    return "clarify" if ctx.clarify_terms or ctx.wikipedia else "solve"


def route_after_prepare(
    state: State, runtime: Runtime[Context]
) -> AfterTables | Literal["retrieve_tables"]:
    """Search the corpus only when the turn has no tables yet."""
    if not state.get("table_ids"):
        return "retrieve_tables"
    return route_after_tables(state, runtime)


def route_after_tables(state: State, runtime: Runtime[Context]) -> AfterTables:
    """Large tables get query expansion and schema/cell retrieval; small ones skip them."""
    ctx = context_of(runtime)
    if state.get("large_tables"):
        return "expand_query" if ctx.expand_query else "retrieve_schema_cells"
    return _after_schema(state, ctx)


def route_after_schema(
    state: State, runtime: Runtime[Context]
) -> Literal["filter", "clarify", "solve"]:
    """Filter when a filter is switched on, else clarify or solve."""
    return _after_schema(state, context_of(runtime))


def route_after_filter(state: State, runtime: Runtime[Context]) -> Literal["clarify", "solve"]:
    """Clarify when a clarifier is switched on, else solve."""
    return _after_filter(state, context_of(runtime))


def route_after_solve(state: State, runtime: Runtime[Context]) -> Literal["solve", "answer"]:
    """Try the next solver when this one produced no value (a 0 is a value)."""
    attempts = state.get("attempts") or []
    last = attempts[-1] if attempts else None
    if last is not None and last.get("error") is None and last.get("answer_items"):
        return "answer"
    return "solve" if next_solver(state, context_of(runtime)) is not None else "answer"


def build_graph(
    resources: Resources | None = None,
    *,
    checkpointer: BaseCheckpointSaver | None = None,
) -> TableRAGGraph:
    """Build and compile the TableRAG graph.

    Args:
        resources: Models, sandbox, indexes and tables the nodes share (default:
            the process-wide resources, created on first use).
        checkpointer: Keeps conversations by ``thread_id`` (e.g. ``InMemorySaver``,
            ``SqliteSaver``); None for one-shot runs or when a server brings its own.
    """
    get: ResourcesGetter = (lambda: resources) if resources is not None else default_resources
    builder = StateGraph(
        State, context_schema=Context, input_schema=InputState, output_schema=OutputState
    )
    nodes = {
        "prepare": make_prepare(get),
        "retrieve_tables": make_retrieve_tables(get),
        "expand_query": make_expand_query(get),
        "retrieve_schema_cells": make_retrieve_schema_cells(get),
        "filter": make_filter(get),
        "clarify": make_clarify(get),
        "solve": make_solve(get),
        "answer": make_answer(get),
    }
    for name, node in nodes.items():
        builder.add_node(name, traced(name, node))
    builder.add_edge(START, "prepare")
    after_tables = ["expand_query", "retrieve_schema_cells", "filter", "clarify", "solve"]
    builder.add_conditional_edges(
        "prepare", route_after_prepare, ["retrieve_tables", *after_tables]
    )
    builder.add_conditional_edges("retrieve_tables", route_after_tables, after_tables)
    builder.add_edge("expand_query", "retrieve_schema_cells")
    builder.add_conditional_edges(
        "retrieve_schema_cells", route_after_schema, ["filter", "clarify", "solve"]
    )
    builder.add_conditional_edges("filter", route_after_filter, ["clarify", "solve"])
    builder.add_edge("clarify", "solve")
    builder.add_conditional_edges("solve", route_after_solve, ["solve", "answer"])
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=checkpointer, name="tablerag")


graph = build_graph()
"""The default graph (no checkpointer): ``langgraph.json`` serves it."""
