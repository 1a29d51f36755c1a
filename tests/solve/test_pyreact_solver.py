"""PyReAct end to end: the scripted model writes real code that runs in the real sandbox."""

from __future__ import annotations

import pandas as pd
import pytest
from fakes import ScriptedChatModel, tool_call
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from tablerag_agents.solve.base import SolverContext
from tablerag_agents.solve.pyreact import PyReActSolver, choose_answer, supports_native_tools

pytestmark = pytest.mark.sandbox


def test_text_react_two_steps_with_state(sandbox, seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            "Thought: filter the A-League rows.\nAction:\n```python\n"
            "a = df[df['League'] == 'USL A-League']\nlen(a)\n```\n"
            "Observation: 4\nFinal Answer: 2004",  # hallucinated tail is cut by the stop
            "Thought: now the last year.\nAction:\n```python\nlast = a['Year'].max()\n```",
            "Thought: I know the answer.\nFinal Answer: 2004",
        ]
    )
    solver = PyReActSolver(model, sandbox, max_iterations=4, mode="text")
    result = solver.solve("what was the last year in the usl a-league?", seasons)
    assert result.error is None and result.answer == "2004"
    assert result.iterations == 2 and len(result.trace) == 3
    first, second, final = result.trace
    assert first.action == "python" and first.observation == "4" and first.ok
    # The assignment-only cell shows the assigned value; state persisted from step 1.
    assert second.code.startswith("last = a['Year']") and second.observation.endswith("2004")
    assert final.action == "answer"
    assert model.stops[0] == ["Observation:", "\nObservation"]
    # Append-only history: every prompt extends the previous one unchanged.
    p1, p2, p3 = model.prompts
    assert p2[: len(p1)] == p1 and p3[: len(p2)] == p2
    assert isinstance(p2[2], AIMessage) and "Final Answer" not in p2[2].content
    assert p2[3].content == "Observation: 4"
    assert isinstance(p1[0], SystemMessage) and "'Avg. Attendance' (int)" in p1[1].content
    assert result.input_tokens == sum(s.input_tokens for s in result.trace) > 300
    assert result.output_tokens > 20
    assert [c.row for c in result.provenance.cells] == [3]
    assert result.provenance.cells[0].column == "Year"


def test_errors_are_fed_back(sandbox, seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            "Action:\n```python\ndf['Attendance'].max()\n```",
            "Thought: the column is named differently.\n"
            "```python\ndf['Avg. Attendance'].max()\n```",
            "Final answer: 7169",
        ]
    )
    result = PyReActSolver(model, sandbox, mode="text").solve("highest attendance?", seasons)
    assert result.answer == "7169" and result.code_errors == 1
    assert result.trace[0].ok is False and "KeyError" in result.trace[0].observation
    assert "KeyError: 'Attendance'" in model.prompts[1][-1].content


def test_lenient_formats_json_action_and_bare_code(sandbox, seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            '{"action": "python", "code": "int((df[\'Year\'] > 2002).sum())"}',
            "df.loc[df['Avg. Attendance'].idxmin(), 'Year']",
            "I am not sure what to do.",
            "**Final Answer:** 2",
        ]
    )
    result = PyReActSolver(model, sandbox, mode="text").solve("how many after 2002?", seasons)
    actions = [s.action for s in result.trace]
    assert actions == ["python", "python", "none", "answer"]
    assert result.trace[0].observation == "3" and result.trace[1].observation.endswith("2004")
    assert "Final Answer" in model.prompts[3][-1].content  # the format hint was sent
    assert result.answer == "2" and result.iterations == 2


def test_max_iterations_uses_last_value(sandbox, seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            "```python\nx = df['Year'].min()\n```",
            "```python\nx + 1\n```",
        ]
    )
    result = PyReActSolver(model, sandbox, max_iterations=2, mode="text").solve("q?", seasons)
    assert result.iterations == 2 and result.answer == "2002" and result.error is None
    assert model.remaining == 0


def test_max_iterations_then_forced_final_answer(sandbox, seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            "```python\ndf.head(2)\n```",
            "Final Answer: 2001|2002",
        ]
    )
    result = PyReActSolver(model, sandbox, max_iterations=1, mode="text").solve("q?", seasons)
    assert "no actions left" in model.prompts[1][-1].content
    assert result.answer_items == ["2001", "2002"] and result.iterations == 1


def test_no_answer_is_an_error(sandbox, seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(["hmm", "still nothing"])
    result = PyReActSolver(model, sandbox, max_iterations=1, mode="text").solve("q?", seasons)
    assert result.error == "max iterations reached without an answer"
    assert result.answer == "" and not result.ok


def test_native_tool_calling_mode(sandbox, seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            tool_call(
                "python", {"code": "w = df[df['Regular Season'].str.contains('Western')]\nw"}
            ),
            tool_call("python", {"code": "'|'.join(str(y) for y in w['Year'])"}, "call_2"),
            AIMessage(content="Final Answer: 2001|2004"),
        ]
    )
    solver = PyReActSolver(model, sandbox, max_iterations=3)
    assert solver.resolved_mode == "tools" and supports_native_tools(model)
    result = solver.solve("which years did they play in the Western conference?", seasons)
    assert model.bound_tools[0]["function"]["name"] == "python"
    assert result.answer_items == ["2001", "2004"] and result.iterations == 2
    tool_msgs = [m for m in model.prompts[1] if isinstance(m, ToolMessage)]
    assert tool_msgs[0].tool_call_id == "call_1" and "4th, Western" in tool_msgs[0].content
    # The filtered rows keep their original index: provenance cites rows 0 and 3.
    assert result.provenance.method == "value_match"
    assert {c.row for c in result.provenance.cells} == {0, 3}


def test_tool_mode_result_rows_provenance(sandbox, seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            tool_call("python", {"code": "df[df['Year'] > 2003][['Year', 'League']]"}),
            AIMessage(content="The seasons are 2004 and 2005."),
        ]
    )
    result = PyReActSolver(model, sandbox, mode="tools").solve("seasons after 2003?", seasons)
    assert result.answer == "The seasons are 2004 and 2005"
    assert result.provenance.method == "result_rows"
    assert {(c.row, c.column) for c in result.provenance.cells} == {
        (3, "Year"),
        (3, "League"),
        (4, "Year"),
        (4, "League"),
    }
    assert result.provenance.evidence_rows[0] == {
        "row": 3,
        "Year": "2004",
        "League": "USL A-League",
    }


def test_context_with_two_tables_and_extras(sandbox, seasons: pd.DataFrame) -> None:
    coaches = pd.DataFrame({"Year": ["2004"], "Coach": ["Bob Lilley"]})
    ctx = SolverContext(
        question="who coached in the last A-League year?",
        tables={"seasons": seasons, "coaches 2004": coaches},
        retrieved_cells="League: USL A-League",
        clarifications="A-League: the second division.",
    )
    model = ScriptedChatModel(
        [
            "```python\ny = df[df['League'] == 'USL A-League']['Year'].max()\n"
            "coaches_2004.loc[coaches_2004['Year'] == y, 'Coach'].iloc[0]\n```",
            "Final Answer: Bob Lilley",
        ]
    )
    result = PyReActSolver(model, sandbox, mode="text").solve(ctx)
    user = model.prompts[0][1].content
    assert "`coaches_2004` has 1 rows" in user and "Relevant cells:\nLeague: USL A-League" in user
    assert "A-League: the second division." in user
    assert result.trace[0].observation == "'Bob Lilley'" and result.answer == "Bob Lilley"


def test_choose_answer() -> None:
    assert choose_answer("2004", 2005) == ["2004"]
    assert choose_answer("The last year they played there was 2004", 2004) == ["2004"]
    assert choose_answer(None, ["a", "b"]) == ["a", "b"]
    assert choose_answer("", None) == []
    assert choose_answer("a | b", None) == ["a", "b"]


def test_auto_mode_is_text_for_models_without_tools() -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    assert not supports_native_tools(FakeListChatModel(responses=["x"]))
    assert supports_native_tools(ScriptedChatModel([]).bind(stop=["x"]))
    assert HumanMessage("x").content == "x"


def test_repeated_failed_code_is_not_rerun(sandbox, seasons: pd.DataFrame) -> None:
    bad = "```python\ndf['Att'].max()\n```"
    model = ScriptedChatModel(
        [bad, bad, "```python\ndf['Avg. Attendance'].max()\n```", "Final Answer: 7169"]
    )
    result = PyReActSolver(model, sandbox, mode="text").solve("max attendance?", seasons)
    assert result.answer == "7169" and result.iterations == 3 and result.code_errors == 2
    assert [s.action for s in result.trace] == ["python", "python", "python", "answer"]
    repeat = result.trace[1]
    assert repeat.exec_seconds == 0 and "already ran this exact code" in repeat.observation
    assert "KeyError: 'Att'" in repeat.observation
    assert model.prompts[2][-1].content == f"Observation: {repeat.observation}"


def test_library_warnings_do_not_reach_the_model(sandbox, seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        ["```python\nimport warnings\nwarnings.warn('noisy')\n41 + 1\n```", "Final Answer: 42"]
    )
    result = PyReActSolver(model, sandbox, mode="text").solve("q", seasons)
    assert result.trace[0].observation == "42"


def test_count_answer_cites_the_counted_rows(sandbox, seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            "```python\nw = df[df['Regular Season'].str.contains('Pacific')]\nw\n```",
            "```python\nlen(w)\n```",
            "Final Answer: 2",
        ]
    )
    result = PyReActSolver(model, sandbox, mode="text").solve("how many Pacific seasons?", seasons)
    assert result.answer == "2" and result.provenance.method == "result_rows"
    assert {c.row for c in result.provenance.cells} == {1, 2}
