"""The TableRAG LangGraph graph, its state and its run settings.

Example:
    >>> from tablerag_agents.graphs import Context, TableQAResult, build_graph
    >>> from tablerag_agents.resources import Resources
    >>> res = Resources()
    >>> lakes = res.add_file("lakes.csv")  # the graph takes table ids, never file paths
    >>> out = build_graph(res).invoke({"question": "Which lake is deepest?", "tables": [lakes]},
    ...                               context=Context(solver="sql"))
    >>> result = TableQAResult.from_output(out)
    >>> result.answer.text, result.answer.cited_cells
"""

from tablerag_agents.graphs.context import NOT_FOUND, Context
from tablerag_agents.graphs.graph import TableRAGGraph, build_graph, graph
from tablerag_agents.graphs.result import GraphAnswer, TableQAResult
from tablerag_agents.graphs.state import InputState, OutputState, State

__all__ = [
    "NOT_FOUND",
    "Context",
    "GraphAnswer",
    "InputState",
    "OutputState",
    "State",
    "TableQAResult",
    "TableRAGGraph",
    "build_graph",
    "graph",
]
