"""The TableRAG graph's state: plain, serialisable data only.

Tables never travel in the state: it holds their ids (registered tables or
ids of the graph's corpus index), which the nodes resolve through the shared
:class:`~tablerag_agents.resources.Resources`; a file path is never opened.
So checkpointers, Studio and the backend can store and show every field.
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

TRACE_RESET: list[dict[str, Any]] = [{"reset": True}]
"""A trace update that starts a new trace (sent at the start of every turn)."""


def add_trace(old: list[dict[str, Any]] | None, new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Append node records to the trace; :data:`TRACE_RESET` starts over."""
    if new and new[0].get("reset"):
        return list(new[1:])
    return list(old or []) + list(new)


class InputState(TypedDict, total=False):
    """What a caller sends: a question (or a human message) and optionally tables."""

    messages: Annotated[list[AnyMessage], add_messages]
    """The conversation; the last human message is the question when ``question`` is unset."""
    question: str
    """The question of this turn."""
    tables: list[str]
    """Ids of the tables to answer over: registered tables (within the Context's
    ``table_scope``) or tables of the corpus index the graph is built over; never
    file paths (register files first, e.g. ``Resources.add_file``). Unset: keep the
    thread's tables, or search."""


class State(InputState, total=False):
    """Everything the nodes produce for one turn (reset at the start of each turn)."""

    standalone_question: str
    """The question rewritten to stand alone (follow-ups), else the question."""
    table_ids: list[str]
    """Tables chosen for this turn; the first is the main table (empty: search)."""
    previous_tables: list[str]
    """The previous turn's tables (a follow-up keeps them when they still match)."""
    table_hits: list[dict[str, Any]]
    """Ranked corpus search hits (table_id, score, caption)."""
    large_tables: list[str]
    """Chosen tables too large to show row by row."""
    schema_queries: list[str]
    """Queries for the schema database (query expansion)."""
    cell_queries: list[str]
    """Queries for the cell database (query expansion)."""
    retrieved: dict[str, str]
    """Per large table, the retrieved schema and cells as prompt text."""
    sub_tables: dict[str, dict[str, Any]]
    """Per filtered table: kept ``rows`` and ``columns``, ``method``, ``fallback``."""
    clarifications: str
    """Explanations of terms in the question."""
    wiki: dict[str, Any] | None
    """Wikipedia background: ``title``, ``url``, ``text``."""
    attempts: list[dict[str, Any]]
    """Every solver run of this turn (a SolverResult as a dict), in order."""
    answer: dict[str, Any]
    """The final answer: a :class:`~tablerag_agents.graphs.result.GraphAnswer` record."""
    trace: Annotated[list[dict[str, Any]], add_trace]
    """Per node: seconds, prompt/completion tokens and what it produced."""


class OutputState(TypedDict, total=False):
    """What a run returns (read it with ``TableQAResult.from_output``, graphs/result.py)."""

    messages: Annotated[list[AnyMessage], add_messages]
    answer: dict[str, Any]
    standalone_question: str
    table_ids: list[str]
    table_hits: list[dict[str, Any]]
    retrieved: dict[str, str]
    trace: Annotated[list[dict[str, Any]], add_trace]
