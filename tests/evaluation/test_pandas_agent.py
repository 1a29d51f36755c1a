"""LangChain's pandas agent as a harness method: scripted ReAct text, real pandas code."""

from __future__ import annotations

import pandas as pd
import pytest
from fakes import BagOfWordsEmbeddings, ScriptedChatModel
from wtq_rows import seasons_frame

from tablerag_agents.evaluation.methods import make_method
from tablerag_agents.evaluation.pandas_agent import (
    PANDAS_AGENT_WARNING,
    SHORT_ANSWER,
    STOPPED,
    is_code_error,
    run_pandas_agent,
)
from tablerag_agents.evaluation.types import EvalExample, Task
from tablerag_agents.resources import Resources
from tablerag_agents.tables import Table

pytest.importorskip("langchain_experimental")

LAKES = pd.DataFrame({"Lake": ["Van", "Tuz", "Beysehir"], "Depth": ["451", "2", "10"]})


def act(code: str, thought: str = "I should look at the table") -> str:
    """One ReAct step of the agent's model: a call of the Python tool."""
    return f"Thought: {thought}\nAction: python_repl_ast\nAction Input: {code}"


def final(answer: str) -> str:
    """The agent's model ending the loop."""
    return f"Thought: I now know the final answer\nFinal Answer: {answer}"


def example(question: str, answers: list[str], task: Task = "qa") -> EvalExample:
    table = Table("204-csv/590", seasons_frame(), caption="Portland Timbers seasons")
    return EvalExample(
        id="q1",
        dataset="wtq",
        task=task,
        question=question,
        answers=answers,
        table_id=table.id,
        load_tables=lambda: [table],
    )


def test_the_agent_runs_pandas_code_and_recovers_from_an_error() -> None:
    model = ScriptedChatModel(
        [
            act("df['depth'].astype(int).sum()"),
            act("df['Depth'].astype(int).sum()", "The column is called Depth"),
            final("463"),
        ]
    )
    run = run_pandas_agent(model, [LAKES], "What is the total depth of the lakes?")
    assert run.items() == ["463"] and not run.stopped
    # The observations come from executing the code, not from the script.
    assert run.steps == [
        ("df['depth'].astype(int).sum()", "KeyError: 'depth'"),
        ("df['Depth'].astype(int).sum()", "463"),
    ]
    assert run.code_errors == ["KeyError: 'depth'"]
    assert "Observation: 463" in str(model.prompts[2][0].content)
    assert model.stops[0] == ["\nObservation"]
    assert run.input_tokens > 100 and run.output_tokens > 10


def test_several_tables_are_df1_df2() -> None:
    second = pd.DataFrame({"Lake": ["Van"], "Province": ["Van"]})
    model = ScriptedChatModel([act("len(df1) + len(df2)"), final("4")])
    run = run_pandas_agent(model, [LAKES, second], "How many rows in all?")
    assert run.steps[0][1] == "4" and run.items() == ["4"] and not run.code_errors
    assert "2 pandas dataframes" in str(model.prompts[0][0].content)


def test_the_iteration_cap_stops_the_agent() -> None:
    model = ScriptedChatModel([act("df.shape"), act("df.columns"), act("df.dtypes")])
    run = run_pandas_agent(model, [LAKES], "q?", max_iterations=2)
    assert run.stopped and run.output == STOPPED and run.items() == []
    assert len(run.steps) == 2 and model.remaining == 1


def test_pandas_agent_method_prediction() -> None:
    model = ScriptedChatModel(
        [
            act("df['Attendance'].max()"),
            act("df.loc[df['Avg. Attendance'].str.replace(',', '').astype(int).idxmax(), 'Year']"),
            final("2001"),
        ]
    )
    res = Resources(chat_model=model, embeddings=BagOfWordsEmbeddings())
    method = make_method("pandas_agent", res, {"max_iterations": "4", "budget": "10"})
    pred = method.run(example("Which year had the highest average attendance?", ["2001"]))
    assert pred.answer == ["2001"] and pred.error and "KeyError" in (pred.error_message or "")
    assert pred.input_tokens > 100 and pred.output_tokens > 0 and pred.seconds > 0
    assert pred.detail["steps"][1].startswith("df.loc[") and not pred.detail["stopped"]
    assert SHORT_ANSWER in str(model.prompts[0][0].content)
    assert method.max_iterations == 4  # type: ignore[attr-defined]


def test_pandas_agent_fact_freeform_and_time_cap() -> None:
    model = ScriptedChatModel([final("No"), final("The team's first season was 2001.")])
    res = Resources(chat_model=model, embeddings=BagOfWordsEmbeddings())
    method = make_method("pandas_agent", res, {})
    fact = method.run(example("the team was 1st in 2003.", ["0"], task="fact"))
    assert fact.answer == ["0"] and not fact.error
    assert "Is the following statement true" in str(model.prompts[0][0].content)
    free = method.run(example("When was the first season?", ["x"], task="freeform"))
    assert free.sentence == "The team's first season was 2001."
    assert "one complete sentence" in str(model.prompts[1][0].content)
    capped = make_method("pandas_agent", res, {"max_seconds": "0"}).run(example("q?", ["x"]))
    assert capped.answer == [] and capped.detail["stopped"] and len(model.prompts) == 2


def test_code_errors_and_the_warning() -> None:
    assert is_code_error("KeyError: 'x'") and is_code_error("ZeroDivisionError: division by zero")
    assert is_code_error("SyntaxError: invalid syntax (<unknown>, line 1)")
    assert not is_code_error("463") and not is_code_error("Lake Van") and not is_code_error(3)
    assert "without any sandbox" in PANDAS_AGENT_WARNING
    assert "never in the library" in PANDAS_AGENT_WARNING and "host process" in PANDAS_AGENT_WARNING
