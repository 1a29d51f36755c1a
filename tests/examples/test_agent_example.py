"""``examples/agent_with_toolkit.py``: the toolkit in ``create_agent``, embedded or any provider.

The fast tests run the example's agent (its default, ask_tables, and the
step-by-step tools) over real tables and the real toolkit against an
OpenAI-compatible endpoint stubbed with ``httpx.MockTransport``: as the
embedded model (calls written as text) and as a provider with native tool
calls. The slow test runs the example itself with the real embedded model,
offline (pytest-socket allows loopback only).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fakes import BagOfWordsEmbeddings
from langchain_core.messages import AIMessage, ToolMessage
from langchain_openai import ChatOpenAI
from tablerag_agents.graphs import Context
from tablerag_agents.tools import TableRAGToolkit

from tablerag_agents.config import Settings
from tablerag_agents.models.tool_calling import EmbeddedChatModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from fake_model import ProgramChatModel, lookup_question, numbers_table  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent_with_toolkit.py"
SQL = 'SELECT "Depth" FROM lakes_of_turkey WHERE "Name in English" = \'Lake Van\''


def _load_example() -> Any:
    spec = importlib.util.spec_from_file_location("agent_with_toolkit", EXAMPLE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


example = _load_example()


class Endpoint:
    """Chat completions replaying scripted replies: text, or native tool calls."""

    def __init__(self, replies: list[str | dict[str, Any]]) -> None:
        """Keep the replies; request bodies go to ``self.requests``."""
        self.replies = replies
        self.requests: list[dict[str, Any]] = []

    def handler(self, request: httpx.Request) -> httpx.Response:
        """Answer with the next reply (a dict is one native tool call)."""
        body = json.loads(request.content)
        self.requests.append(body)
        reply = self.replies.pop(0)
        if isinstance(reply, dict):
            call = {
                "id": f"call_{len(self.requests)}",
                "type": "function",
                "function": {"name": reply["name"], "arguments": json.dumps(reply["args"])},
            }
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
        else:
            message = {"role": "assistant", "content": reply}
        return httpx.Response(
            200,
            json={
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            },
        )

    def client(self) -> httpx.Client:
        """An HTTP client whose requests reach this endpoint."""
        return httpx.Client(transport=httpx.MockTransport(self.handler))


@pytest.fixture
def toolkit() -> Iterator[TableRAGToolkit]:
    """The toolkit over the bundled tables (no model needed by its SQL tools)."""
    with TableRAGToolkit.from_folder(
        example.bundled_tables(), settings=Settings(llm_cache=False)
    ) as kit:
        yield kit


def _forced_tool(body: dict[str, Any]) -> str | None:
    """The tool a request forces: the embedded grammar's name, or OpenAI's tool_choice."""
    if "json_schema" in body:
        [option] = body["json_schema"]["anyOf"]
        return str(option["properties"]["name"]["const"])
    choice = body.get("tool_choice")
    return choice["function"]["name"] if isinstance(choice, dict) else None


#: The step-by-step tools (the default is ask_tables alone), each forced once in turn.
STEPS = (["describe_table", "sql_query"], ["describe_table", "sql_query"])


def _check_run(messages: list[Any], endpoint: Endpoint) -> None:
    results = [m for m in messages if isinstance(m, ToolMessage)]
    assert [r.name for r in results] == ["describe_table", "sql_query"]
    assert "'Depth': text" in str(results[0].content)
    assert "451 m" in str(results[1].content) and results[1].status != "error"
    assert isinstance(messages[-1], AIMessage) and messages[-1].text == "Lake Van is 451 m deep."
    # Step 1 must describe a table, step 2 must query; the answer step is free.
    assert [_forced_tool(b) for b in endpoint.requests] == ["describe_table", "sql_query", None]
    system = endpoint.requests[0]["messages"][0]
    assert system["role"] == "system" and "- lakes_of_turkey: " in system["content"]
    assert [t["function"]["name"] for t in endpoint.requests[0]["tools"]] == [
        "describe_table",
        "sql_query",
    ]


def test_example_agent_with_the_embedded_model_class(toolkit: TableRAGToolkit) -> None:
    endpoint = Endpoint(
        [
            '{"name": "describe_table", "arguments": {"table": "lakes_of_turkey"}}',
            json.dumps({"name": "sql_query", "arguments": {"query": SQL}}),
            "Lake Van is 451 m deep.",
        ]
    )
    model = EmbeddedChatModel(
        base_url="http://127.0.0.1:9/v1", api_key="k", model="qwen", http_client=endpoint.client()
    )
    messages = example.ask(example.build_agent(toolkit, model, *STEPS), "How deep is Lake Van?")
    _check_run(messages, endpoint)
    assert "tool_choice" not in endpoint.requests[0]


def test_example_agent_with_native_tool_calls(toolkit: TableRAGToolkit) -> None:
    # Any other provider: ChatOpenAI (or init_chat_model) with native tool calling.
    endpoint = Endpoint(
        [
            {"name": "describe_table", "args": {"table": "lakes_of_turkey"}},
            {"name": "sql_query", "args": {"query": SQL}},
            "Lake Van is 451 m deep.",
        ]
    )
    model = ChatOpenAI(
        base_url="http://127.0.0.1:9/v1", api_key="k", model="gpt", http_client=endpoint.client()
    )
    messages = example.ask(example.build_agent(toolkit, model, *STEPS), "How deep is Lake Van?")
    _check_run(messages, endpoint)


def test_example_agent_defaults_to_ask_tables() -> None:
    """The default agent: one forced ask_tables call runs the graph, then the answer."""
    question = lookup_question(49)
    endpoint = Endpoint(
        [
            json.dumps({"name": "ask_tables", "arguments": {"question": question}}),
            "n = 7 has value 49.",
        ]
    )
    model = EmbeddedChatModel(
        base_url="http://127.0.0.1:9/v1", api_key="k", model="qwen", http_client=endpoint.client()
    )
    with TableRAGToolkit.from_dataframes(
        {"numbers": numbers_table(20)},
        chat_model=ProgramChatModel(),  # the graph's model writes the SQL
        embeddings=BagOfWordsEmbeddings(),
        ask_context=Context(solver="sql"),
    ) as kit:
        messages = example.ask(example.build_agent(kit, model), question)
    (result,) = [m for m in messages if isinstance(m, ToolMessage)]
    assert result.name == "ask_tables" and result.content.startswith("Answer: 7")
    assert [_forced_tool(b) for b in endpoint.requests] == ["ask_tables", None]
    system = endpoint.requests[0]["messages"][0]["content"]
    assert "ask_tables answers a question" in system and "describe_table" not in system
    assert messages[-1].text == "n = 7 has value 49."


def test_example_transcript_and_bad_tool_names(toolkit: TableRAGToolkit) -> None:
    model = EmbeddedChatModel(base_url="http://127.0.0.1:9/v1", api_key="k", model="q")
    with pytest.raises(ValueError, match="unknown tools \\['sql'\\]"):
        example.build_agent(toolkit, model, ["describe_table", "sql"])
    call = {"name": "sql_query", "args": {"query": "SELECT 1"}, "id": "c1"}
    text = example.transcript(
        [AIMessage("", tool_calls=[call]), ToolMessage("1", tool_call_id="c1"), AIMessage("One.")]
    )
    assert text == "-> sql_query({'query': 'SELECT 1'})\n<- 1\nAnswer: One."


@pytest.mark.slow
def test_example_answers_offline_with_the_embedded_model(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_API_KEY", "TABLERAG_CHAT_MODEL", "TABLERAG_BASE_URL", "TABLERAG_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TABLERAG_LLM_CACHE", "false")  # really run the model
    monkeypatch.chdir(EXAMPLE.parent)  # no tablerag.toml here
    assert example.main(["How deep is Lake Van?"]) == 0
    out = capsys.readouterr().out
    assert "-> ask_tables({'question': " in out
    answer = out.strip().splitlines()[-1]
    assert answer.startswith("Answer: ") and "451" in answer, out
