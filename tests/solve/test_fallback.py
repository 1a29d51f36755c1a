"""The fallback chain: later solvers run only when earlier ones give no real answer."""

from __future__ import annotations

import pandas as pd
import pytest
from fakes import ScriptedChatModel

from tablerag_agents.solve import FallbackSolver, ReadTableSolver, SQLSolver
from tablerag_agents.solve.base import SolverResult
from tablerag_agents.solve.fallback import is_real_answer


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


def test_a_zero_is_kept_when_no_solver_does_better(seasons: pd.DataFrame) -> None:
    reader, _ = _reader("Final Answer: none")
    chain = FallbackSolver(
        [
            _sql("SELECT COUNT(*) FROM t WHERE \"League\" = 'MLS'"),
            _sql("SELECT nope FROM t"),
            reader,
        ]
    )
    result = chain.solve("how many MLS seasons?", seasons)
    assert result.answer == "0" and result.solver == "fallback:sql"
    assert result.tried == ["sql", "sql", "read_table"]


def test_is_real_answer() -> None:
    def res(*items: str, error: str | None = None) -> SolverResult:
        return SolverResult(solver="x", question="q", answer_items=list(items), error=error)

    assert is_real_answer(res("Paris")) and is_real_answer(res("0", "3"))
    assert not is_real_answer(res("0")) and not is_real_answer(res("None"))
    assert not is_real_answer(res()) and not is_real_answer(res("Paris", error="boom"))
    with pytest.raises(ValueError, match="at least one"):
        FallbackSolver([])
