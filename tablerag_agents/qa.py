"""Answer questions with the TableRAG graph: the engine behind ``tablerag ask`` and ``demo``.

A thin layer over :mod:`tablerag_agents.graphs`: it turns a table file, tables
of a database or an index folder into the graph's input and context, runs the graph with the
process-wide :class:`~tablerag_agents.resources.Resources` (one chat model,
one embedding model, one sandbox, cached indexes for every question), and
returns the answer as a :class:`~tablerag_agents.graphs.result.TableQAResult`.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from importlib import resources as package_files
from pathlib import Path
from typing import Any

from tablerag_agents.errors import TableLoadError
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
    db_url: str | None = None,
    db_tables: Sequence[str] = (),
    context: Context | None = None,
    resources: Resources | None = None,
    on_event: EventHandler | None = None,
) -> TableQAResult:
    """Answer ``question`` over a table file, tables of a database, or the best tables of an index.

    Args:
        question: The question.
        table_path: A table file to answer over (loaded and registered in the
            resources under its id, the file's stem).
        index_dir: A saved corpus index to search (when no table file is given).
        db_url: A PostgreSQL or SQLite SQLAlchemy URL: ``db_tables`` are
            registered under their names and queried where they live. Without
            ``index_dir`` the run answers over them (several: the one the
            question matches best); with it, those tables of the index are
            queried in the database instead of the sample the index saved.
        db_tables: Table names in that database (``schema.table`` for PostgreSQL).
        context: Graph settings (solver, budget, filters...); defaults otherwise.
        resources: Shared models and caches (default: the process-wide ones).
        on_event: Called with each "updates" and "custom" stream event.

    Raises:
        ValueError: An empty question, nothing to answer over, a table file with
            a database, database tables without a URL, or a table not in the index.
        TableLoadError: The table file or a database table cannot be read.
    """
    if not question.strip():
        raise ValueError("the question is empty")
    if table_path is None and index_dir is None and db_url is None:
        raise ValueError("give a table file, a database URL or an index directory")
    if table_path is not None and db_url is not None:
        raise ValueError("give a table file or a database URL, not both")
    if db_url is not None and not db_tables:
        raise ValueError("name the database's tables to answer over")
    if db_url is None and db_tables:
        raise ValueError("database table names need the database's URL")
    ctx = context or Context()
    res = resources or default_resources()
    inputs: InputState = {"question": question}
    if table_path is not None:  # the graph takes ids only: the file is opened here
        inputs["tables"] = [res.add_file(table_path)]
    registered: list[str] = []
    if db_url is not None:
        registered = _add_database_tables(res, db_url, db_tables, index_dir)
        if index_dir is None and len(registered) == 1:
            inputs["tables"] = registered
        elif index_dir is None:  # the graph searches these tables for the question's
            scope = ctx.table_scope
            ctx = replace(ctx, table_scope=[t for t in registered if scope is None or t in scope])
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
    result = TableQAResult.from_output(final, seconds=time.perf_counter() - started)
    if index_dir is not None:
        _warn_saved_samples(res, index_dir, result.answer.table_ids, registered)
    return result


def _add_database_tables(
    res: Resources, url: str, names: Sequence[str], index_dir: Path | None
) -> list[str]:
    """Open ``names`` in the database at ``url`` and register them; returns their ids.

    Raises:
        ValueError: ``index_dir`` is given and does not hold one of the tables.
    """
    from tablerag_agents.tables.source_tables import load_database_tables

    if index_dir is not None:
        indexed = res.corpus(index_dir)
        missing = [name for name in names if name not in indexed]
        if missing:
            raise ValueError(
                f"the index {index_dir} holds no table {missing[0]!r}: name its database tables "
                "(their ids), or drop the database to answer over the index alone"
            )
    return [res.add_table(table) for table in load_database_tables(url, names)]


def _warn_saved_samples(
    res: Resources, index_dir: Path, table_ids: Sequence[str], live: Sequence[str]
) -> None:
    """Warn when the answer read the sample an index saved of a table that lives elsewhere."""
    from tablerag_agents.tables.source_tables import is_database_url

    for table_id in table_ids:
        if table_id in live:
            continue
        try:
            table = res.corpus_table(table_id, index_dir)
        except TableLoadError:  # an index without table data: nothing was read from it
            continue
        if table is None or "sample_rows" not in table.metadata:
            continue
        where = str(table.metadata.get("source", ""))
        hint = (
            f"add its database to query it there (tablerag ask --index ... --uri URL "
            f"--table {table_id})"
            if is_database_url(where)
            else "ask over its file to read all of it (tablerag ask --table FILE)"
        )
        warnings.warn(
            f"{table_id!r} was answered over the {table.metadata['sample_rows']}-row sample "
            f"the index saved of {where}, not the whole table: {hint}",
            stacklevel=3,
        )


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
