"""Solvers that answer a question over tables: PyReAct, SQL, process_df, ReadTable,
the reading baselines (ReadSchema, RandRowSampling, RowColRetrieval) and a
vote over several of them (trying solvers in turn is the graph's ``retry_solvers``).

Each takes a :class:`SolverContext` (or a question and one DataFrame) and
returns a :class:`SolverResult` with the short answer, a sentence, the cited
cells, the trace, tokens and seconds.
"""

from tablerag_agents.solve.base import (
    CitedCell,
    Provenance,
    Solver,
    SolverContext,
    SolverResult,
    TraceStep,
)
from tablerag_agents.solve.baselines import (
    RandRowSamplingSolver,
    ReadSchemaSolver,
    RowColRetrievalSolver,
)
from tablerag_agents.solve.combine import VotingSolver
from tablerag_agents.solve.factory import (
    SOLVER_NAMES,
    SolverName,
    check_solver_name,
    make_solver,
    needs_embeddings,
    needs_sandbox,
)
from tablerag_agents.solve.process_df import ProcessDfSolver
from tablerag_agents.solve.pyreact import PyReActSolver, supports_native_tools
from tablerag_agents.solve.read_table import ReadTableSolver
from tablerag_agents.solve.second_opinion import SecondOpinionSolver
from tablerag_agents.solve.sql import SQLSolver
from tablerag_agents.solve.sql_engine import SafeDuckDB, SQLRejectedError, SQLResult

__all__ = [
    "SOLVER_NAMES",
    "CitedCell",
    "ProcessDfSolver",
    "Provenance",
    "PyReActSolver",
    "RandRowSamplingSolver",
    "ReadSchemaSolver",
    "ReadTableSolver",
    "RowColRetrievalSolver",
    "SQLRejectedError",
    "SQLResult",
    "SQLSolver",
    "SecondOpinionSolver",
    "SafeDuckDB",
    "Solver",
    "SolverContext",
    "SolverName",
    "SolverResult",
    "TraceStep",
    "VotingSolver",
    "check_solver_name",
    "make_solver",
    "needs_embeddings",
    "needs_sandbox",
    "supports_native_tools",
]
