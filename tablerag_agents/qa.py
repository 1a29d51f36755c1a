"""Answer a question over a table file or a corpus index (retrieval + a solver).

This is the direct pipeline the CLI's ``ask`` and ``demo`` use: find the table
(corpus search), give a large table's solver a compact TableRAG context (schema
and cells retrieved under a budget), and solve with sandboxed code, SQL or the
whole table in the prompt.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from tablerag_agents.config import Settings
from tablerag_agents.index import TableIndex, build_table_context
from tablerag_agents.indexing import hit_dict, index_tables, open_index
from tablerag_agents.models import get_chat_model, get_embeddings
from tablerag_agents.solve import (
    FallbackSolver,
    ProcessDfSolver,
    PyReActSolver,
    ReadTableSolver,
    Solver,
    SolverContext,
    SolverResult,
    SQLSolver,
    VotingSolver,
)
from tablerag_agents.tables import Table, load_table

logger = logging.getLogger(__name__)

SolverName = Literal["pyreact", "sql", "process_df", "read_table", "fallback", "vote"]

#: Tables with more cells than this get retrieved schema + cells in the prompt.
LARGE_TABLE_CELLS = 5_000


class AskResult(BaseModel):
    """The answer plus how it was found."""

    question: str
    table_id: str
    caption: str = ""
    table_hits: list[dict[str, Any]] = Field(default_factory=list)
    """Ranked tables from the corpus search (empty for a single table file)."""
    retrieved_context: str | None = None
    """Schema and cells retrieved for a large table (None: the table was small)."""
    result: SolverResult


def make_solver(name: SolverName, model: BaseChatModel) -> Solver:
    """Create a solver by name; code-running solvers get a sandbox (fails closed).

    ``fallback`` tries SQL, then process_df, then reading the table, until one
    gives a non-empty answer; ``vote`` runs SQL and process_df with five sampled
    programs each plus ReadTable and keeps the answer most runs agree on.
    """
    if name == "sql":
        return SQLSolver(model)
    if name == "read_table":
        return ReadTableSolver(model)
    if name not in ("pyreact", "process_df", "fallback", "vote"):
        raise ValueError(f"unknown solver {name!r}")
    from tablerag_agents.sandbox import Sandbox

    sandbox = Sandbox()
    if name == "pyreact":
        return PyReActSolver(model, sandbox)
    if name == "process_df":
        return ProcessDfSolver(model, sandbox)
    if name == "fallback":
        return FallbackSolver(
            [SQLSolver(model), ProcessDfSolver(model, sandbox), ReadTableSolver(model)]
        )
    return VotingSolver(
        [
            SQLSolver(model, samples=5),
            ProcessDfSolver(model, sandbox, samples=5),
            ReadTableSolver(model),
        ]
    )


def table_context(
    question: str, table: Table, settings: Settings, *, budget: int = 10_000
) -> str | None:
    """Return the retrieved schema + cells text for a large table (None if small)."""
    if table.n_cells <= LARGE_TABLE_CELLS:
        return None
    index = TableIndex.build(table, get_embeddings(settings), budget=budget)
    schema = index.search_schema([question], k=8)
    cells = index.search_cells([question], k=10)
    return build_table_context(table, schema, cells)


def solve_table(
    question: str, table: Table, *, solver: SolverName, settings: Settings
) -> tuple[SolverResult, str | None]:
    """Answer over one table; returns the result and the retrieved context used."""
    context_text = table_context(question, table, settings)
    ctx = SolverContext(
        question=question,
        tables={table.id: table.df},
        caption=table.caption,
        schema_text=context_text,
    )
    model = get_chat_model(settings)
    return make_solver(solver, model).solve(ctx), context_text


def answer_question(
    question: str,
    *,
    table_path: Path | None = None,
    index_dir: Path | None = None,
    solver: SolverName = "pyreact",
    settings: Settings | None = None,
    k: int = 5,
) -> AskResult:
    """Answer ``question`` over a table file, or over the best table of an index."""
    settings = settings or Settings()
    if not question.strip():
        raise ValueError("the question is empty")
    hits: list[dict[str, Any]] = []
    if table_path is not None:
        table = load_table(table_path)
    elif index_dir is not None:
        index = open_index(index_dir, settings)
        found = index.search(question, k=k)
        if not found:
            raise ValueError(f"the index at {index_dir} has no tables")
        hits = [hit_dict(h) for h in found]
        table = index.get_table(found[0].table_id)
    else:
        raise ValueError("give a table file or an index directory")
    result, context_text = solve_table(question, table, solver=solver, settings=settings)
    return AskResult(
        question=question,
        table_id=table.id,
        caption=table.caption,
        table_hits=hits,
        retrieved_context=context_text,
        result=result,
    )


def sample_tables_dir() -> Path:
    """The folder of sample tables bundled with the package."""
    return Path(str(resources.files("tablerag_agents").joinpath("data")))


def run_demo(
    question: str,
    *,
    settings: Settings | None = None,
    index_dir: Path | None = None,
    echo: Callable[[str], Any] = logger.info,
) -> AskResult:
    """Index the bundled sample tables, search them and answer with the chat model."""
    settings = settings or Settings()
    index_dir = index_dir or Path(settings.cache_dir) / "demo-index"
    stats = index_tables(
        [sample_tables_dir()], index_dir, settings=settings, rebuild=False, progress=False
    )
    echo(f"Index: {index_dir} ({stats['total']} sample tables)")
    echo(f"Question: {question}")
    result = answer_question(question, index_dir=index_dir, settings=settings, k=3)
    for rank, hit in enumerate(result.table_hits, 1):
        echo(f"  {rank}. {hit['table_id']} (score {hit['score']:.3f})")
    return result
