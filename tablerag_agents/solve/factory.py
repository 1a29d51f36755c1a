"""Create a solver, or a combination of solvers, by name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, get_args

from langchain_core.language_models import BaseChatModel

from tablerag_agents.solve.base import Solver
from tablerag_agents.solve.baselines import make_reader
from tablerag_agents.solve.combine import FallbackSolver, VotingSolver
from tablerag_agents.solve.process_df import ProcessDfSolver
from tablerag_agents.solve.pyreact import PyReActSolver
from tablerag_agents.solve.read_table import ReadTableSolver
from tablerag_agents.solve.sql import SQLSolver

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from tablerag_agents.sandbox import Sandbox

SolverName = Literal[
    "fallback",
    "pyreact",
    "sql",
    "process_df",
    "read_table",
    "vote",
    "read_schema",
    "rand_row_sampling",
    "row_col_retrieval",
]
SOLVER_NAMES: tuple[str, ...] = get_args(SolverName)
"""Every solver name, the default (``fallback``, best on held-out WTQ questions) first;
the last three are the table-access baselines of Chen et al. (TableRAG)."""

_NEEDS_SANDBOX = {"pyreact", "process_df", "fallback", "vote"}
_READERS = {"read_table", "read_schema", "rand_row_sampling", "row_col_retrieval"}


def needs_sandbox(name: str) -> bool:
    """True if the solver runs model-written Python (and so needs the sandbox)."""
    return name in _NEEDS_SANDBOX


def needs_embeddings(name: str) -> bool:
    """True if the solver ranks rows and columns with embeddings (``row_col_retrieval``)."""
    return name == "row_col_retrieval"


def make_solver(
    name: str,
    model: BaseChatModel,
    sandbox: Sandbox | None = None,
    *,
    embeddings: Embeddings | None = None,
    ground_literals: bool = False,
) -> Solver:
    """Create the solver called ``name``.

    ``fallback`` tries SQL, then process_df, then reading the table, until one
    produces a value; ``vote`` runs SQL and process_df with five sampled
    programs each plus ReadTable and keeps the answer most runs agree on.
    ``read_schema``, ``rand_row_sampling`` and ``row_col_retrieval`` are the
    reading baselines of :mod:`tablerag_agents.solve.baselines` (defaults).
    ``ground_literals`` turns on the SQL and process_df solvers' literal-to-cell
    rewrite (off by default; see :class:`~tablerag_agents.solve.sql.SQLSolver`).

    Raises:
        ValueError: For an unknown name, a code-running solver without a
            sandbox, or ``row_col_retrieval`` without embeddings.
    """
    if name not in SOLVER_NAMES:
        raise ValueError(f"unknown solver {name!r}; choose from {', '.join(SOLVER_NAMES)}")
    if name == "sql":
        return SQLSolver(model, ground_literals=ground_literals)
    if name in _READERS:
        return make_reader(name, model, embeddings=embeddings)
    if sandbox is None:
        raise ValueError(f"the {name!r} solver runs Python and needs a sandbox")
    if name == "pyreact":
        return PyReActSolver(model, sandbox)
    if name == "process_df":
        return ProcessDfSolver(model, sandbox, ground_literals=ground_literals)
    if name == "fallback":
        return FallbackSolver(
            [
                SQLSolver(model, ground_literals=ground_literals),
                ProcessDfSolver(model, sandbox, ground_literals=ground_literals),
                ReadTableSolver(model),
            ]
        )
    return VotingSolver(
        [
            SQLSolver(model, samples=5, ground_literals=ground_literals),
            ProcessDfSolver(model, sandbox, samples=5, ground_literals=ground_literals),
            ReadTableSolver(model),
        ]
    )
