"""Combined solvers: the vote (solvers in turn are the graph's retries: tests/graphs)."""

from __future__ import annotations

import pandas as pd
import pytest
from fakes import ScriptedChatModel

from tablerag_agents.solve import ReadTableSolver, SQLSolver, VotingSolver
from tablerag_agents.solve.base import SolverResult


def _sql(*queries: str) -> SQLSolver:
    return SQLSolver(ScriptedChatModel([f"```sql\n{q}\n```" for q in queries]), max_retries=0)


def _reader(reply: str) -> tuple[ReadTableSolver, ScriptedChatModel]:
    model = ScriptedChatModel([reply])
    return ReadTableSolver(model), model


def test_a_value_is_any_item_without_an_error() -> None:
    """What the vote counts (and what the graph's retry path stops at): 0, "None", "no"."""

    def res(*items: str, error: str | None = None) -> SolverResult:
        return SolverResult(solver="x", question="q", answer_items=list(items), error=error)

    assert res("Paris").ok and res("0", "3").ok
    assert res("0").ok and res("None").ok and res("no").ok
    assert not res().ok and not res("Paris", error="boom").ok


def test_vote_counts_every_sampled_run(seasons: pd.DataFrame) -> None:
    sql = SQLSolver(
        ScriptedChatModel(
            [
                'SELECT "Year" FROM t ORDER BY "Year" LIMIT 1',  # greedy: 2001
                'SELECT "Year" FROM t ORDER BY "Avg. Attendance" LIMIT 1',  # 2004
                'SELECT "Year" FROM t WHERE "Regular Season" = \'3rd, Pacific\'',  # 2003
            ]
        ),
        samples=3,
    )
    reader, _ = _reader("Final Answer: 2004")
    result = VotingSolver([sql, reader]).solve("least attended year?", seasons)
    # SQL alone keeps its greedy 2001 (a three-way tie), but 2004 has two runs behind it.
    assert result.answer == "2004" and result.solver == "vote:read_table"
    assert result.tried == ["sql", "read_table"] and len(result.trace) == 4


def test_vote_counts_a_zero_like_any_answer_and_trusts_the_first_solver_on_ties(
    seasons: pd.DataFrame,
) -> None:
    reader, _ = _reader("Final Answer: 4")
    zero = _sql("SELECT COUNT(*) FROM t WHERE \"League\" = 'MLS'")
    assert VotingSolver([zero, reader]).solve("how many MLS seasons?", seasons).answer == "0"
    reader, _ = _reader("Final Answer: 0")
    assert VotingSolver([_sql("SELECT nope FROM t"), reader]).solve("?", seasons).answer == "0"
    reader, _ = _reader("Final Answer: 3")
    four = _sql("SELECT COUNT(*) FROM t WHERE \"League\" = 'USL A-League'")
    result = VotingSolver([four, reader]).solve("how many A-League seasons?", seasons)
    assert result.answer == "4" and result.solver == "vote:sql"
    with pytest.raises(ValueError, match="at least one"):
        VotingSolver([])
