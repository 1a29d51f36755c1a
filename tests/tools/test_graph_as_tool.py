"""The graph as one tool of an agent: the README's way (``ask_tables``), not ``as_tool()``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fakes import BagOfWordsEmbeddings, ScriptedChatModel, tool_call
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from pydantic import ValidationError
from tablerag_agents.graphs import Context, build_graph
from tablerag_agents.tools import TableRAGToolkit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from fake_model import ProgramChatModel, lookup_question, numbers_table  # noqa: E402


def test_an_agent_uses_the_graph_through_ask_tables() -> None:
    with TableRAGToolkit.from_dataframes(
        {"numbers": numbers_table(20)},
        chat_model=ProgramChatModel(),
        embeddings=BagOfWordsEmbeddings(),
        ask_context=Context(solver="sql"),
    ) as toolkit:
        (ask,) = toolkit.get_tools(["ask_tables"])
        args = {"question": lookup_question(49), "tables": ["numbers"]}
        agent_model = ScriptedChatModel([tool_call("ask_tables", args), "n = 7 has value 49."])
        agent = create_agent(agent_model, [ask])
        messages = agent.invoke({"messages": [("user", "Which n has value 49?")]})["messages"]
    (result,) = [m for m in messages if isinstance(m, ToolMessage)]
    assert result.status == "success" and result.content.startswith("Answer: 7")
    cell = {"table": "numbers", "row": 6, "column": "n", "value": "7"}
    assert result.artifact["text"] == "7" and cell in result.artifact["cited_cells"]
    assert messages[-1].content == "n = 7 has value 49."
    assert [t["function"]["name"] for t in agent_model.bound_tools] == ["ask_tables"]


def test_a_bare_graph_as_tool_wants_messages_as_the_readme_says() -> None:
    graph = build_graph(None)  # not run: only its input schema is read
    with pytest.warns(Warning):  # as_tool is a beta API of langchain-core
        tool = graph.as_tool(name="ask", description="Answer from the tables.")
    assert {"messages", "question", "tables"} <= set(tool.args)
    with pytest.raises(ValidationError, match="messages"):
        tool.invoke({"question": "Which n has value 49?", "tables": ["numbers"]})
