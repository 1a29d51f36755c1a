"""Answer questions with the TableRAG graph: the engine behind ``tablerag ask`` and ``demo``.

A thin layer over :mod:`tablerag_agents.graphs`: it turns a table file or an
index folder into the graph's input and context, runs the graph with the
process-wide :class:`~tablerag_agents.resources.Resources` (one chat model,
one embedding model, one sandbox, cached indexes for every question), and
returns the answer as a :class:`~tablerag_agents.graphs.result.TableQAResult`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from importlib import resources as package_files
from pathlib import Path
from typing import Any

from tablerag_agents.graphs import Context, InputState, build_graph
from tablerag_agents.graphs.result import TableQAResult
from tablerag_agents.resources import Resources, default_resources

logger = logging.getLogger(__name__)

EventHandler = Callable[[str, Any], None]
"""Receives ``(stream mode, chunk)`` while the graph runs ("updates" or "custom")."""


def answer_question(
    question: str,
    *,
    table_path: Path | None = None,
    index_dir: Path | None = None,
    context: Context | None = None,
    resources: Resources | None = None,
    on_event: EventHandler | None = None,
) -> TableQAResult:
    """Answer ``question`` over a table file, or over the best tables of an index.

    Args:
        question: The question.
        table_path: A table file to answer over (loaded and registered in the
            resources under its id, the file's stem).
        index_dir: A saved corpus index to search (when no table file is given).
        context: Graph settings (solver, budget, filters...); defaults otherwise.
        resources: Shared models and caches (default: the process-wide ones).
        on_event: Called with each "updates" and "custom" stream event.

    Raises:
        ValueError: An empty question, or neither a table nor an index.
        TableLoadError: The table file cannot be read.
    """
    if not question.strip():
        raise ValueError("the question is empty")
    if table_path is None and index_dir is None:
        raise ValueError("give a table file or an index directory")
    ctx = context or Context()
    res = resources or default_resources()
    inputs: InputState = {"question": question}
    if table_path is not None:  # the graph takes ids only: the file is opened here
        inputs["tables"] = [res.add_file(table_path)]
    graph = build_graph(res, index_dir=index_dir)
    started = time.perf_counter()
    final: dict[str, Any] = {}
    mode: str
    chunk: Any
    for mode, chunk in graph.stream(
        inputs, context=ctx, stream_mode=["updates", "custom", "values"]
    ):
        if mode == "values":
            final = chunk
        elif on_event is not None:
            on_event(mode, chunk)
    return TableQAResult.from_output(final, seconds=time.perf_counter() - started)


def sample_tables_dir() -> Path:
    """The folder of sample tables bundled with the package."""
    return Path(str(package_files.files("tablerag_agents").joinpath("data")))


DEMO_QUESTIONS: list[dict[str, Any]] = [
    {
        "table": "manzanillo_airport_routes_2013.csv",
        "question": "How many more passengers flew to Los Angeles than to Saskatoon "
        "from Manzanillo airport?",
        "expected": ["12467"],
    },
    {
        "table": "lakes_of_turkey.csv",
        "question": "Which lake in Turkey is the deepest?",
        "expected": ["Lake Van"],
    },
    {
        "table": "usl_a_league_team_seasons.csv",
        "question": "In which year did the team have its highest average attendance?",
        "expected": ["2010"],
    },
    {
        "table": "superbike_1990_season_rounds.csv",
        "question": "How many races did Raymond Roche win in the 1990 season?",
        "expected": ["8"],
    },
]
"""The demo's questions: one per bundled table, with the answer read off the table."""
