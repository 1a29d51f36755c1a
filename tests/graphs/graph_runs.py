"""Run a compiled graph and see which nodes ran."""

from __future__ import annotations

from typing import Any


def run_graph(graph: Any, inputs: dict[str, Any], ctx: Any) -> tuple[list[str], dict[str, Any]]:
    """Run the graph; return the nodes that ran (in order) and the final values."""
    ran: list[str] = []
    final: dict[str, Any] = {}
    for mode, chunk in graph.stream(inputs, context=ctx, stream_mode=["updates", "values"]):
        if mode == "updates":
            ran.extend(chunk)
        else:
            final = chunk
    return ran, final
