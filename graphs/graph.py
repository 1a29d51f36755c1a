"""The TableRAG graph: question -> tables -> schema/cells -> filter -> clarify -> solve -> answer.

Every stage after ``prepare`` is skipped when it has nothing to do: a given
small table goes straight to ``solve``; query expansion and schema/cell
retrieval run only for tables too large for the prompt; the filter and the
clarifiers run only when the :class:`Context` switches them on. When the
solver produces no value, the next untried solver of ``retry_solvers`` runs.

A run resolves table ids only (registered tables, within the Context's
``table_scope``, and the corpus index the graph is built over): it never opens
a file or folder a request names. :func:`build_graph` takes your resources,
index and checkpointer; ``graph`` (compiled without a checkpointer) is what
``langgraph.json`` serves to LangGraph Studio and API clients, over what its
deployment configures (:func:`served_graph`).
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any, Literal, TypeAlias

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
from tablerag_agents.graphs.tracing import Node, traced

from tablerag_agents.errors import ConfigError, GraphRunError, TableRAGError
from tablerag_agents.resources import Resources, default_resources
from tablerag_agents.tables import load_tables

logger = logging.getLogger(__name__)

INDEX_DIR_ENV = "TABLERAG_INDEX_DIR"
"""The served graph's corpus index folder (deployment configuration)."""
TABLES_DIR_ENV = "TABLERAG_TABLES_DIR"
"""A folder of table files the served graph registers (deployment configuration)."""

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
    index_dir: str | Path | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
    readable_errors: bool = False,
) -> TableRAGGraph:
    """Build and compile the TableRAG graph.

    Args:
        resources: Models, sandbox, indexes and tables the nodes share (default:
            the process-wide resources, created on first use).
        index_dir: A saved corpus index: turns without tables search it, and
            its ids can be named. Trusted configuration, never a request's value.
        checkpointer: Keeps conversations by ``thread_id`` (e.g. ``InMemorySaver``,
            ``SqliteSaver``); None for one-shot runs or when a server brings its own.
        readable_errors: Raise the library's errors as :class:`GraphRunError`
            (a ``RuntimeError``) so a LangGraph API server shows their message.
    """
    get = (lambda: resources) if resources is not None else default_resources
    return _compile(ResourcesGetter(get, index_dir), checkpointer, readable_errors)


def _compile(
    resources: ResourcesGetter, checkpointer: BaseCheckpointSaver | None, readable_errors: bool
) -> TableRAGGraph:
    builder = StateGraph(
        State, context_schema=Context, input_schema=InputState, output_schema=OutputState
    )
    nodes = {
        "prepare": make_prepare(resources),
        "retrieve_tables": make_retrieve_tables(resources),
        "expand_query": make_expand_query(resources),
        "retrieve_schema_cells": make_retrieve_schema_cells(resources),
        "filter": make_filter(resources),
        "clarify": make_clarify(resources),
        "solve": make_solve(resources),
        "answer": make_answer(resources),
    }
    for name, node in nodes.items():
        wrapped = traced(name, node)
        builder.add_node(name, _raise_readable(wrapped) if readable_errors else wrapped)
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


def _raise_readable(node: Node) -> Node:
    """Wrap ``node`` so the library's errors leave it as :class:`GraphRunError`."""

    def run(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        try:
            return node(state, runtime)
        except TableRAGError as exc:
            if isinstance(exc, ValueError | RuntimeError):
                raise  # shown as they are
            raise GraphRunError(f"{type(exc).__name__}: {exc}") from exc

    run.__name__ = getattr(node, "__name__", "node")
    run.__doc__ = node.__doc__
    return run


class _DeploymentTables:
    """The process-wide resources, with the deployment's table folder registered once."""

    def __init__(self, folder: str | None) -> None:
        self._folder = folder
        self._done: Resources | None = None
        self._lock = threading.Lock()

    def __call__(self) -> Resources:
        res = default_resources()
        with self._lock:
            if self._folder and self._done is not res:
                if not Path(self._folder).is_dir():
                    raise ConfigError(f"{TABLES_DIR_ENV}={self._folder!r} is not a folder")
                ids = [res.add_table(table) for table in load_tables(self._folder)]
                logger.info("registered %d tables from %s", len(ids), self._folder)
                self._done = res
        return res


def served_graph() -> TableRAGGraph:
    """The graph ``langgraph.json`` serves, over what its deployment configures.

    ``TABLERAG_TABLES_DIR`` names a folder of table files registered on first
    use (ids: their paths in the folder without the extension) and
    ``TABLERAG_INDEX_DIR`` a saved corpus index. Clients name tables by these
    ids; a file path or an ``index_dir`` from a client is refused, and errors
    reach them with their message (a wrong folder too, at the first run).
    """
    index_dir = os.environ.get(INDEX_DIR_ENV) or None
    resources = ResourcesGetter(_DeploymentTables(os.environ.get(TABLES_DIR_ENV)), index_dir)
    return _compile(resources, None, readable_errors=True)


graph = served_graph()
"""The default graph (no checkpointer): ``langgraph.json`` serves it."""
