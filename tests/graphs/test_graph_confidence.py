"""The answer's confidence in the graph: a vote's agreement, a single run's estimate, and
``min_confidence`` flagging or withholding answers below it."""

from __future__ import annotations

import pytest
from fakes import ScriptedChatModel, sql_reply
from graph_runs import run_graph
from tablerag_agents.graphs import Context, GraphAnswer, TableQAResult, build_graph
from tablerag_agents.graphs.context import LOW_CONFIDENCE
from tablerag_agents.graphs.context_overrides import context_from_settings

FIRST = 'SELECT MIN("Year") FROM t'
ASK = {"question": "first season?", "tables": ["seasons"]}


def _answer(resources_factory, seasons_table, replies, ctx: Context) -> tuple[GraphAnswer, str]:
    model = ScriptedChatModel(replies)
    graph = build_graph(resources_factory(model, seasons_table))
    _, out = run_graph(graph, ASK, ctx)
    assert model.remaining == 0
    return GraphAnswer.model_validate(out["answer"]), str(out["messages"][-1].content)


def test_an_answer_below_min_confidence_is_withheld_and_says_so(
    resources_factory, seasons_table
) -> None:
    ctx = Context(solver="sql", min_confidence=0.6, low_confidence="abstain")
    answer, reply = _answer(resources_factory, seasons_table, [sql_reply(FIRST)], ctx)
    # One clean SQL run is worth 0.5 (solve/confidence.py): below 0.6.
    assert (answer.abstained, answer.low_confidence, answer.confidence) == (True, True, 0.5)
    assert answer.text == LOW_CONFIDENCE and answer.items == [] and answer.best_guess == "2001"
    assert reply == (
        "Not confident enough to answer: confidence 0.50 is below the minimum 0.60 "
        "(best guess '2001')."
    )


def test_an_answer_below_min_confidence_is_flagged_by_default(
    resources_factory, seasons_table
) -> None:
    ctx = Context(solver="sql", min_confidence=0.6)
    answer, reply = _answer(resources_factory, seasons_table, [sql_reply(FIRST)], ctx)
    assert (answer.text, answer.abstained, answer.low_confidence) == ("2001", False, True)
    assert answer.best_guess == "" and answer.cited_cells
    assert reply.endswith("(Low confidence: 0.50, below the minimum 0.60; check the cited cells.)")
    answer, reply = _answer(
        resources_factory, seasons_table, [sql_reply(FIRST)], Context(solver="sql")
    )
    assert not answer.low_confidence and "Low confidence" not in reply


def test_an_answer_after_a_retry_is_less_sure(resources_factory, seasons_table) -> None:
    replies = [sql_reply(f"SELECT nope{i} FROM t") for i in range(3)] + ["Final Answer: 2001"]
    ctx = Context(solver="sql", retry_solvers=["read_table"])
    answer, _ = _answer(resources_factory, seasons_table, replies, ctx)
    # A reading (0.35) after a solver that gave no value (x 0.5).
    assert (answer.text, answer.solver, answer.confidence) == ("2001", "read_table", 0.175)


def test_context_rejects_settings_outside_their_range() -> None:
    with pytest.raises(ValueError, match="vote_k must be >= 1"):
        Context(vote_k=0)
    with pytest.raises(ValueError, match=r"min_confidence must be in \[0, 1\]"):
        Context(min_confidence=1.5)


@pytest.mark.sandbox
def test_a_unanimous_vote_is_confident(resources_factory, seasons_table) -> None:
    replies = [
        sql_reply(FIRST),
        "```python\ndef process_df(df):\n    return df['Year'].astype(int).min()\n```",
        "Final Answer: 2001",
    ]
    ctx = Context(solver="vote", vote_k=1, min_confidence=0.9, low_confidence="abstain")
    model = ScriptedChatModel(replies)
    graph = build_graph(resources_factory(model, seasons_table))
    _, out = run_graph(graph, ASK, ctx)
    result = TableQAResult.from_output(out)
    answer = result.answer
    assert (answer.text, answer.confidence, answer.low_confidence) == ("2001", 1.0, False)
    assert answer.solver == "vote:sql" and model.remaining == 0
    solved = next(r for r in result.trace if r["node"] == "solve")["produced"]["attempts"]
    assert solved["confidence"] == 1.0
    assert solved["votes"] == [
        {"source": s, "answer": "2001", "dropped": None}
        for s in ("sql", "process_df", "read_table")
    ]


def test_a_second_opinion_that_agrees_lifts_the_confidence(
    resources_factory, seasons_table
) -> None:
    ctx = Context(solver="sql", second_opinion=True, min_confidence=0.6)
    answer, _ = _answer(
        resources_factory, seasons_table, [sql_reply(FIRST), "Final Answer: 2001"], ctx
    )
    # One clean SQL run (0.5) that a reading of the table confirms (x 1.6).
    assert (answer.text, answer.solver, answer.confidence) == ("2001", "sql", 0.8)
    assert not answer.low_confidence
    answer, _ = _answer(
        resources_factory, seasons_table, [sql_reply(FIRST), "Final Answer: 2004"], ctx
    )
    assert (answer.text, answer.confidence, answer.low_confidence) == ("2001", 0.3, True)


@pytest.mark.sandbox
def test_a_pandas_second_opinion_is_a_setting(resources_factory, seasons_table) -> None:
    ctx = Context(solver="sql", second_opinion=True, second_opinion_solver="process_df")
    pandas_min = "```python\ndef process_df(df):\n    return df['Year'].astype(int).min()\n```"
    answer, _ = _answer(resources_factory, seasons_table, [sql_reply(FIRST), pandas_min], ctx)
    assert (answer.text, answer.solver, answer.confidence) == ("2001", "sql", 0.8)
    with pytest.raises(ValueError, match="second_opinion_solver"):
        context_from_settings({"second_opinion_solver": "vote"})
