"""Combined solvers: the fallback chain and the vote."""

from __future__ import annotations

import pandas as pd
import pytest
from fakes import ScriptedChatModel

from tablerag_agents.solve import FallbackSolver, ReadTableSolver, SQLSolver, VotingSolver
from tablerag_agents.solve.base import SolverResult
from tablerag_agents.solve.combine import is_real_answer


def _sql(*queries: str) -> SQLSolver:
    return SQLSolver(ScriptedChatModel([f"```sql\n{q}\n```" for q in queries]), max_retries=0)


def _reader(reply: str) -> tuple[ReadTableSolver, ScriptedChatModel]:
    model = ScriptedChatModel([reply])
    return ReadTableSolver(model), model


def test_first_real_answer_wins_and_later_solvers_do_not_run(seasons: pd.DataFrame) -> None:
    reader, model = _reader("Final Answer: 2003")
    chain = FallbackSolver([_sql('SELECT MIN("Year") FROM t'), reader])
    result = chain.solve("first year?", seasons)
    assert result.answer == "2001" and result.solver == "fallback:sql"
    assert result.tried == ["sql"] and model.prompts == []


def test_empty_sql_result_falls_back_to_the_next_solver(seasons: pd.DataFrame) -> None:
    reader, model = _reader("Final Answer: 2005")
    chain = FallbackSolver([_sql('SELECT "Year" FROM t WHERE "League" = \'MLS\''), reader])
    result = chain.solve("which year in the USL First Division?", seasons)
    assert result.answer == "2005" and result.solver == "fallback:read_table"
    assert result.tried == ["sql", "read_table"] and len(model.prompts) == 1
    # Costs and the trace cover both solvers.
    assert [s.action for s in result.trace] == ["sql", "answer"]
    assert [s.step for s in result.trace] == [1, 2]
    assert result.iterations == 2 and result.input_tokens > model.prompts[0][0].content.count(" ")


def test_a_zero_is_an_answer_and_ends_the_chain(seasons: pd.DataFrame) -> None:
    """No season was in MLS: 0 is the right answer, not a reason to try more solvers."""
    reader, model = _reader("Final Answer: none")
    chain = FallbackSolver(
        [
            _sql("SELECT COUNT(*) FROM t WHERE \"League\" = 'MLS'"),
            _sql("SELECT nope FROM t"),
            reader,
        ]
    )
    result = chain.solve("how many MLS seasons?", seasons)
    assert result.answer == "0" and result.solver == "fallback:sql"
    assert result.tried == ["sql"] and model.prompts == []


def test_the_chain_moves_on_only_when_a_solver_has_no_value(seasons: pd.DataFrame) -> None:
    reader, _ = _reader("Final Answer: none")
    chain = FallbackSolver([_sql("SELECT nope FROM t"), reader])
    result = chain.solve("how many MLS seasons?", seasons)
    assert result.answer == "none" and result.solver == "fallback:read_table"
    assert result.tried == ["sql", "read_table"]


def test_is_real_answer() -> None:
    def res(*items: str, error: str | None = None) -> SolverResult:
        return SolverResult(solver="x", question="q", answer_items=list(items), error=error)

    assert is_real_answer(res("Paris")) and is_real_answer(res("0", "3"))
    assert is_real_answer(res("0")) and is_real_answer(res("None")) and is_real_answer(res("no"))
    assert not is_real_answer(res()) and not is_real_answer(res("Paris", error="boom"))
    with pytest.raises(ValueError, match="at least one"):
        FallbackSolver([])


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
