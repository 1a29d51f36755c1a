"""Assertions shared by the SQLite, PostgreSQL and file tests."""

from __future__ import annotations

from fakes import ScriptedChatModel, sql_reply
from source_data import N_ROWS, sales_frame

from tablerag_agents.solve.base import SolverContext
from tablerag_agents.solve.sql import SQLSolver
from tablerag_agents.table_index.cells import build_cell_db, cell_db_from_profiles
from tablerag_agents.table_index.schema import build_schema, schema_from_profiles
from tablerag_agents.tables.model import Table
from tablerag_agents.tables.source import ProfileRequest


def assert_same_indexes_as_pandas(table: Table) -> None:
    """The pushed-down schema and cell databases equal the in-memory ones of the same rows."""
    assert table.source is not None
    frame = sales_frame()
    for budget in (10_000, 10):
        profiles = table.source.profile(ProfileRequest(budget=budget))
        assert schema_from_profiles(profiles) == build_schema(frame)
        pushed = cell_db_from_profiles(profiles, budget=budget)
        local = build_cell_db(frame, budget=budget)
        assert pushed.entries == local.entries
        assert pushed.allocation == local.allocation
        assert pushed.skipped == local.skipped
        assert pushed.n_distinct == local.n_distinct
    assert len(pushed.entries) == 10 and pushed.allocation["quantity"] == 4


def assert_solver_counts_all_rows(table: Table) -> None:
    """The SQL solver's query runs on every row, though the prompt saw only a sample."""
    assert table.source is not None
    model = ScriptedChatModel([sql_reply("SELECT count(*) FROM t WHERE \"region\" = 'north'")])
    ctx = SolverContext(
        question="how many orders came from the north region?",
        tables={table.id: table.df},
        sources={table.id: table.source},
    )
    result = SQLSolver(model).solve(ctx)
    assert result.error is None
    assert result.answer_items == ["250"]
    assert len(table.df) < N_ROWS
    prompt = str(model.prompts[0][-1].content)
    assert f"has {N_ROWS:,} rows" in prompt
