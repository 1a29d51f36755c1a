"""Create a solver, or a combination of solvers, by name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypedDict, get_args

from langchain_core.language_models import BaseChatModel

from tablerag_agents.solve.base import Solver
from tablerag_agents.solve.baselines import make_reader
from tablerag_agents.solve.combine import VotingSolver
from tablerag_agents.solve.process_df import ProcessDfSolver
from tablerag_agents.solve.pyreact import PyReActSolver
from tablerag_agents.solve.read_table import ReadTableSolver
from tablerag_agents.solve.sql import SQLSolver

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from tablerag_agents.sandbox import Sandbox


class TableSwitches(TypedDict):
    """The solvers' table switches (see :mod:`~tablerag_agents.solve.typed_frames`)."""

    typed_columns: bool
    row_numbers: bool


class SQLSwitches(TypedDict):
    """The SQL solver's own switches, passed as keyword arguments."""

    filter_hints: bool
    table_example: bool
    pick_columns: bool
    several_rows: bool


SolverName = Literal[
    "sql",
    "pyreact",
    "process_df",
    "read_table",
    "vote",
    "read_schema",
    "rand_row_sampling",
    "row_col_retrieval",
]
SOLVER_NAMES: tuple[str, ...] = get_args(SolverName)
"""Every solver name, the graph's first solver (``sql``) first; the last three are the
table-access baselines of Chen et al. (TableRAG)."""

DEFAULT_VOTE_K = 5
"""Programs the ``vote`` solver samples per code path (SQL, pandas) unless told otherwise."""

_NEEDS_SANDBOX = {"pyreact", "process_df", "vote"}
_READERS = {"read_table", "read_schema", "rand_row_sampling", "row_col_retrieval"}


def check_solver_name(name: str) -> None:
    """Raise ``ValueError`` naming the choices when ``name`` is not a solver."""
    if name in SOLVER_NAMES:
        return
    hint = ""
    if name == "fallback":  # the solver chain that became the graph's retries
        hint = (
            " ('fallback' was removed: the graph tries solvers in turn, by default sql, "
            "then process_df, then read_table; see Context.retry_solvers)"
        )
    raise ValueError(f"unknown solver {name!r}; choose from {', '.join(SOLVER_NAMES)}{hint}")


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
    vote_k: int = DEFAULT_VOTE_K,
    typed_columns: bool = False,
    row_numbers: bool = False,
    filter_hints: bool = False,
    table_example: bool = False,
    pick_columns: bool = False,
    several_rows: bool = False,
    sql_samples: int = 1,
) -> Solver:
    """Create the solver called ``name``.

    ``vote`` samples ``vote_k`` SQL queries and ``vote_k`` process_df functions
    (each path's samples in one request) plus one ReadTable reading, drops the
    runs that fail the execution checks and keeps the answer most of the rest
    agree on (:class:`~tablerag_agents.solve.combine.VotingSolver`).
    ``read_schema``, ``rand_row_sampling`` and ``row_col_retrieval`` are the
    reading baselines of :mod:`tablerag_agents.solve.baselines` (defaults).
    ``ground_literals`` turns on the SQL and process_df solvers' literal-to-cell
    rewrite (off by default; see :class:`~tablerag_agents.solve.sql.SQLSolver`);
    ``typed_columns`` and ``row_numbers`` give the SQL, process_df and PyReAct
    solvers parsed companion columns and a row-number column (off by default; see
    :mod:`~tablerag_agents.solve.typed_frames`); ``filter_hints``,
    ``table_example``, ``pick_columns`` and ``several_rows`` are the SQL solver's
    (off by default; see :class:`~tablerag_agents.solve.sql.SQLSolver`).
    ``sql_samples`` above 1 makes the ``sql`` solver sample that many queries (the
    extra ones in one request), run them all, keep the majority answer and score it
    by their agreement.

    Raises:
        ValueError: For an unknown name, a code-running solver without a
            sandbox, ``row_col_retrieval`` without embeddings, or ``vote_k`` or
            ``sql_samples`` < 1.
    """
    check_solver_name(name)
    if vote_k < 1:
        raise ValueError(f"vote_k must be >= 1 (programs per code path), got {vote_k}")
    if sql_samples < 1:
        raise ValueError(f"sql_samples must be >= 1 (queries per question), got {sql_samples}")
    shape = TableSwitches(typed_columns=typed_columns, row_numbers=row_numbers)
    sql_switches = SQLSwitches(
        filter_hints=filter_hints,
        table_example=table_example,
        pick_columns=pick_columns,
        several_rows=several_rows,
    )
    if name == "sql":
        return SQLSolver(
            model, samples=sql_samples, ground_literals=ground_literals, **shape, **sql_switches
        )
    if name in _READERS:
        return make_reader(name, model, embeddings=embeddings)
    if sandbox is None:
        raise ValueError(f"the {name!r} solver runs Python and needs a sandbox")
    if name == "pyreact":
        return PyReActSolver(model, sandbox, **shape)
    if name == "process_df":
        return ProcessDfSolver(model, sandbox, ground_literals=ground_literals, **shape)
    return VotingSolver(
        [
            SQLSolver(
                model, samples=vote_k, ground_literals=ground_literals, **shape, **sql_switches
            ),
            ProcessDfSolver(
                model, sandbox, samples=vote_k, ground_literals=ground_literals, **shape
            ),
            ReadTableSolver(model),
        ]
    )
