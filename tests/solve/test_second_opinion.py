"""A second opinion: a reading of the table that raises or lowers a program's confidence."""

from __future__ import annotations

import pandas as pd
import pytest
from fakes import ScriptedChatModel, sql_reply

from tablerag_agents.solve.confidence import (
    AGREED,
    DISAGREED,
    PROGRAM_RUN,
    final_code,
    run_confidence,
)
from tablerag_agents.solve.process_df import ProcessDfSolver
from tablerag_agents.solve.read_table import ReadTableSolver
from tablerag_agents.solve.second_opinion import SecondOpinionSolver
from tablerag_agents.solve.sql import SQLSolver

FIRST = 'SELECT MIN("Year") FROM t'
YES_2003 = "SELECT CASE WHEN COUNT(*) > 0 THEN 'yes' ELSE 'no' END FROM t WHERE \"Year\" = '2003'"


def _solve(replies: list[str], question: str, seasons: pd.DataFrame):
    model = ScriptedChatModel(replies)
    solver = SecondOpinionSolver(SQLSolver(model), ReadTableSolver(model))
    result = solver.solve(question, seasons)
    return result, model


def test_an_agreeing_reading_raises_the_confidence(seasons: pd.DataFrame) -> None:
    result, model = _solve([sql_reply(FIRST), "Final Answer: 2001"], "first season?", seasons)
    assert model.remaining == 0 and result.answer == "2001" and result.solver == "sql"
    assert result.second_opinion is not None and result.second_opinion.items == ["2001"]
    assert run_confidence(result, {"t": seasons}) == pytest.approx(PROGRAM_RUN * AGREED)
    # The reading's call is one step of the run's trace, with its cost.
    assert [s.action for s in result.trace] == ["sql", "answer"]
    assert result.trace[-1].observation == "second opinion: 2001"
    assert result.trace[-1].thought == "second opinion from read_table"
    assert result.input_tokens == sum(s.input_tokens for s in result.trace) > 0


def test_a_disagreeing_reading_lowers_it_and_keeps_the_program_answer(
    seasons: pd.DataFrame,
) -> None:
    result, _ = _solve([sql_reply(FIRST), "Final Answer: 2003"], "first season?", seasons)
    assert result.answer == "2001" and result.second_opinion.items == ["2003"]
    assert run_confidence(result, {"t": seasons}) == pytest.approx(PROGRAM_RUN * DISAGREED)


def test_a_yes_no_reading_is_compared_as_a_verdict(seasons: pd.DataFrame) -> None:
    result, _ = _solve(
        [sql_reply(YES_2003), "Final Answer: Yes."], "did they play in 2003?", seasons
    )
    assert result.answer == "yes" and result.second_opinion.items == ["yes"]
    assert run_confidence(result, {"t": seasons}) == pytest.approx(PROGRAM_RUN * AGREED)


def test_a_reading_without_a_value_changes_nothing(seasons: pd.DataFrame) -> None:
    # A value that is no verdict does not answer a yes/no question.
    replies = [sql_reply(YES_2003), "Final Answer: 2003"]
    result, _ = _solve(replies, "did they play in 2003?", seasons)
    assert result.second_opinion is not None and result.second_opinion.items == []
    assert run_confidence(result, {"t": seasons}) == PROGRAM_RUN


def test_no_reading_is_asked_for_a_failed_run(seasons: pd.DataFrame) -> None:
    replies = [sql_reply(f"SELECT nope{i} FROM t") for i in range(3)]
    result, model = _solve(replies, "first season?", seasons)
    assert not result.ok and result.second_opinion is None and model.remaining == 0


@pytest.mark.sandbox
def test_a_pandas_program_can_give_the_second_opinion(sandbox, seasons: pd.DataFrame) -> None:
    pandas_min = "```python\ndef process_df(df):\n    return df['Year'].astype(int).min()\n```"
    model = ScriptedChatModel([sql_reply(FIRST), pandas_min])
    solver = SecondOpinionSolver(SQLSolver(model), ProcessDfSolver(model, sandbox))
    result = solver.solve("first season?", seasons)
    assert model.remaining == 0 and result.second_opinion.items == ["2001"]
    assert result.second_opinion.source == "process_df" and "astype(int)" in result.trace[-1].code
    # The checker's program is not taken for the answer's: the answer's code is the SQL.
    assert final_code(result) == FIRST
    assert run_confidence(result, {"t": seasons}) == pytest.approx(PROGRAM_RUN * AGREED)


def test_a_solver_never_checks_its_own_answer(seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel([sql_reply(FIRST)])
    result = SecondOpinionSolver(SQLSolver(model), SQLSolver(model)).solve("first?", seasons)
    assert result.second_opinion is None and model.remaining == 0
