"""Tool calls written as text by the embedded model become LangChain tool calls.

The model class runs its real request and response path: ``ChatOpenAI``'s
OpenAI client talks to an in-process OpenAI-compatible endpoint
(``httpx.MockTransport``) that answers scripted reply texts, streamed or not,
and records every request body.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from tablerag_agents.models.tool_calling import EmbeddedChatModel, parse_tool_calls

NAMES = ["multiply", "lake_depth"]


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@tool
def lake_depth(lake: str) -> str:
    """Return the depth of a lake in Turkey."""
    return {"Lake Van": "451 m", "Lake Tuz": "2 m"}.get(lake, f"no lake named {lake!r}")


class FakeServer:
    """An OpenAI-compatible chat endpoint replaying reply texts in order."""

    def __init__(self, replies: Sequence[str]) -> None:
        """Remember the replies; requests are recorded in ``self.requests``."""
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []

    def handler(self, request: httpx.Request) -> httpx.Response:
        """Answer one chat-completions request with the next reply."""
        body = json.loads(request.content)
        self.requests.append(body)
        if not self.replies:
            return httpx.Response(500, json={"error": {"message": "out of replies"}})
        text = self.replies.pop(0)
        usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
        base = {"id": "c", "created": 0, "model": body["model"]}
        if not body.get("stream"):
            choice = {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
            return httpx.Response(
                200, json={**base, "object": "chat.completion", "choices": [choice], "usage": usage}
            )
        # Stream a few characters per event, like tokens.
        events = []
        for i in range(0, len(text), 3):
            delta = {"content": text[i : i + 3], **({"role": "assistant"} if i == 0 else {})}
            events.append({"index": 0, "delta": delta, "finish_reason": None})
        events.append({"index": 0, "delta": {}, "finish_reason": "stop"})
        lines = [
            json.dumps({**base, "object": "chat.completion.chunk", "choices": [e]}) for e in events
        ]
        if (body.get("stream_options") or {}).get("include_usage"):
            lines.append(
                json.dumps(
                    {**base, "object": "chat.completion.chunk", "choices": [], "usage": usage}
                )
            )
        sse = "".join(f"data: {line}\n\n" for line in [*lines, "[DONE]"])
        return httpx.Response(200, text=sse, headers={"content-type": "text/event-stream"})

    def model(self, **kwargs: Any) -> EmbeddedChatModel:
        """The embedded model class pointed at this endpoint."""
        transport = httpx.MockTransport(self.handler)
        return EmbeddedChatModel(
            base_url="http://127.0.0.1:9/v1",
            api_key="local",
            model="qwen",
            temperature=0,
            max_retries=0,
            stream_usage=True,
            http_client=httpx.Client(transport=transport),
            http_async_client=httpx.AsyncClient(transport=transport),
            **kwargs,
        )


FENCED = 'Let me compute it.\n```json\n{"name": "multiply", "arguments": {"a": 12, "b": 34}}\n```'


# --- the parser ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "calls", "content"),
    [
        (FENCED, [("multiply", {"a": 12, "b": 34})], "Let me compute it."),
        (
            '<tool_call>\n{"name": "lake_depth", "arguments": {"lake": "Lake Van"}}\n</tool_call>',
            [("lake_depth", {"lake": "Lake Van"})],
            "",
        ),
        (
            '{"name": "multiply", "arguments": {"a": 2, "b": 3}}',
            [("multiply", {"a": 2, "b": 3})],
            "",
        ),
        (  # several calls, two formats, prose around
            'First:\n<tool_call>\n{"name": "multiply", "arguments": {"a": 1, "b": 2}}'
            "\n</tool_call>\n"
            'then\n```\n{"name": "lake_depth", "arguments": {"lake": "Lake Tuz"}}\n```\nDone.',
            [("multiply", {"a": 1, "b": 2}), ("lake_depth", {"lake": "Lake Tuz"})],
            "First:\n\nthen\n\nDone.",
        ),
        (  # arguments as a JSON string, "parameters" instead of "arguments"
            '```json\n{"name": "multiply", "arguments": "{\\"a\\": 5, \\"b\\": 6}"}\n```\n'
            '```json\n{"name": "lake_depth", "parameters": {"lake": "Lake Van"}}\n```',
            [("multiply", {"a": 5, "b": 6}), ("lake_depth", {"lake": "Lake Van"})],
            "",
        ),
        (  # OpenAI's shape, and a list of calls in one block
            '```json\n[{"type": "function", "function": {"name": "multiply", '
            '"arguments": {"a": 1, "b": 1}}}, '
            '{"name": "lake_depth", "arguments": {"lake": "x"}}]\n```',
            [("multiply", {"a": 1, "b": 1}), ("lake_depth", {"lake": "x"})],
            "",
        ),
        (  # the template's doubled braces, trailing comma, Python literals
            '<tool_call>\n{{"name": "multiply", "arguments": {"a": 3, "b": 4,}}}\n</tool_call>'
            "\n<tool_call>{'name': 'lake_depth', 'arguments': {'lake': 'Lake Van'}}</tool_call>",
            [("multiply", {"a": 3, "b": 4}), ("lake_depth", {"lake": "Lake Van"})],
            "",
        ),
        (  # bare, with the doubled braces of the template's example, even unbalanced
            '{{"name": "multiply", "arguments": {"a": 17, "b": 23}}',
            [("multiply", {"a": 17, "b": 23})],
            "",
        ),
        (
            'Call: {{"name": "multiply", "arguments": {"a": 1, "b": 2}}}\nok',
            [("multiply", {"a": 1, "b": 2})],
            "Call: \nok",
        ),
        (  # calls wrapped in <tools> like the system prompt's tool list
            'Plan:\n<tools>\n{"name": "lake_depth", "arguments": {"lake": "Lake Van"}}\n'
            '{"name": "multiply", "arguments": {"a": 1, "b": 2}}\n</tools>',
            [("lake_depth", {"lake": "Lake Van"}), ("multiply", {"a": 1, "b": 2})],
            "Plan:",
        ),
        (  # an unclosed block at the end of the reply (stopped early)
            '<tool_call>\n{"name": "multiply", "arguments": {"a": 7, "b": 8}}',
            [("multiply", {"a": 7, "b": 8})],
            "",
        ),
        (  # a bound tool named without arguments
            'Sure: {"name": "lake_depth"}',
            [("lake_depth", {})],
            "Sure:",
        ),
        (  # an unknown tool stays a call: the agent's tool node answers with an error
            '```json\n{"name": "sql", "arguments": {"query": "select 1"}}\n```',
            [("sql", {"query": "select 1"})],
            "",
        ),
    ],
)
def test_parser_reads_calls(text: str, calls: list[tuple[str, dict]], content: str) -> None:
    reply = parse_tool_calls(text, NAMES)
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == calls
    assert reply.content == content
    assert reply.invalid_tool_calls == []
    ids = [c["id"] for c in reply.tool_calls]
    assert all(ids) and len(set(ids)) == len(ids)


@pytest.mark.parametrize(
    "text",
    [
        "The deepest lake is Lake Van (451 m).",
        '```json\n{"answer": 451, "unit": "m"}\n```',  # JSON, but no call
        '{"name": "Lake Van", "depth": "451 m"}',  # has "name", not a tool, no arguments
        "Use `multiply` with {a} and {b}; see <b>bold</b> and [1, 2].",
        '```python\nprint({"x": 1})\n```',
    ],
)
def test_parser_leaves_text_that_is_no_call(text: str) -> None:
    reply = parse_tool_calls(text, NAMES)
    assert reply.content == text
    assert reply.tool_calls == [] and reply.invalid_tool_calls == []


@pytest.mark.parametrize(
    ("text", "name", "error"),
    [
        (
            '<tool_call>\n{"name": "multiply", "arguments": {"a": 1, "b": }\n</tool_call>',
            "multiply",
            "not valid JSON",
        ),
        (
            '```json\n{"name": "multiply", "arguments": {"a": 1 "b": 2}}\n```',
            "multiply",
            "not valid JSON",
        ),
        ('{"name": "multiply", "arguments": "a=1, b=2"}', "multiply", "not valid JSON"),
        ('{"name": "multiply", "arguments": [1, 2]}', "multiply", "must be a JSON object"),
        ("<tool_call>multiply(1, 2)</tool_call>", None, "not valid JSON"),
        ('<tool_call>{"tool": "multiply"}</tool_call>', None, "must be a JSON object"),
    ],
)
def test_parser_reports_unreadable_calls(text: str, name: str | None, error: str) -> None:
    reply = parse_tool_calls(text, NAMES)
    assert reply.tool_calls == []
    [bad] = reply.invalid_tool_calls
    assert bad["name"] == name
    assert error in str(bad["error"])
    assert bad["id"] and isinstance(bad["args"], str)
    assert reply.content == ""


# A real reply of the embedded model (shortened): a plan with guessed calls and an invented answer.
PLAN = (
    "To answer this, here's how I can do it:\n\n1. Call describe_table:\n"
    '```json\n{"name": "lake_depth", "arguments": {"lake": "Lake Van"}}\n```\n'
    "This will give me the table.\n\n2. Call multiply:\n"
    '```json\n{"name": "multiply", "arguments": {"a": 1, "b": 2}}\n```\n'
    "Therefore, Lake Van is 123 meters deep."
)


def test_parser_can_keep_only_the_first_group_of_calls() -> None:
    reply = parse_tool_calls(PLAN, NAMES, first_group_only=True)
    assert [c["name"] for c in reply.tool_calls] == ["lake_depth"]
    assert reply.content == "To answer this, here's how I can do it:\n\n1. Call describe_table:"
    assert reply.dropped.startswith("This will give me") and reply.dropped.endswith(
        "123 meters deep."
    )
    # Calls one after another (whitespace only between them) are one group.
    two = '<tool_call>{"name": "multiply", "arguments": {"a": 1, "b": 2}}</tool_call>\n\n' * 2
    reply = parse_tool_calls(two + "The result is 9.", NAMES, first_group_only=True)
    assert len(reply.tool_calls) == 2 and reply.dropped == "The result is 9."
    assert len(parse_tool_calls(PLAN, NAMES).tool_calls) == 2


# --- requests: what the server is sent ------------------------------------------------


def test_tools_and_history_are_sent_natively_for_the_servers_template() -> None:
    server = FakeServer(["The product is 408."])
    model = server.model().bind_tools([multiply, lake_depth])
    history = [
        HumanMessage("What is 12 times 34?"),
        AIMessage(
            "I will multiply them.",
            tool_calls=[{"name": "multiply", "args": {"a": 12, "b": 34}, "id": "call_1"}],
        ),
        ToolMessage("408", tool_call_id="call_1"),
    ]
    reply = model.invoke(history)
    assert reply.content == "The product is 408." and reply.tool_calls == []
    [body] = server.requests
    assert [t["function"]["name"] for t in body["tools"]] == NAMES
    assert body["tools"][0]["function"]["parameters"]["required"] == ["a", "b"]
    assistant, tool_msg = body["messages"][1], body["messages"][2]
    assert assistant["content"] is None  # calls only: the small model copies earlier text
    assert assistant["tool_calls"][0]["function"] == {
        "name": "multiply",
        "arguments": '{"a": 12, "b": 34}',
    }
    # The server's Qwen2.5 template renders role "tool" as <tool_response> in a user turn.
    assert tool_msg == {"role": "tool", "content": "408", "tool_call_id": "call_1"}
    # The small model answers from tool results when the question is repeated after them.
    assert body["messages"][3] == {
        "role": "user",
        "content": "Question: What is 12 times 34?\nReply with the answer itself (the name, "
        "number or date asked for) taken from the tool results above, or call a tool if they "
        "do not contain it.",
    }
    assert len(body["messages"]) == 4
    assert "tool_choice" not in body and "json_schema" not in body


def test_the_tool_result_hint_is_only_sent_after_tool_results() -> None:
    server = FakeServer(["a", "b"])
    server.model(tool_result_hint="Now answer: {question} {x}").bind_tools([multiply]).invoke(
        [
            HumanMessage("q1"),
            AIMessage("", tool_calls=[{"name": "multiply", "args": {}, "id": "c"}]),
            ToolMessage("1", tool_call_id="c"),
        ]
    )
    assert server.requests[0]["messages"][-1] == {"role": "user", "content": "Now answer: q1 {x}"}
    server.model(tool_result_hint=None).bind_tools([multiply]).invoke([HumanMessage("q2")])
    assert server.requests[1]["messages"] == [{"role": "user", "content": "q2"}]


def test_text_of_earlier_tool_call_replies_can_be_kept() -> None:
    server = FakeServer(["ok"])
    call = {"name": "multiply", "args": {"a": 1, "b": 2}, "id": "c1"}
    server.model(history_calls_only=False).bind_tools([multiply]).invoke(
        [
            HumanMessage("q"),
            AIMessage("Thinking.", tool_calls=[call]),
            ToolMessage("2", tool_call_id="c1"),
        ]
    )
    assert server.requests[0]["messages"][1]["content"] == "Thinking."


def test_unreadable_calls_in_the_history_are_sent_as_text() -> None:
    # llama.cpp answers HTTP 500 to a tool call whose arguments are not JSON.
    server = FakeServer(["ok"])
    bad = AIMessage(
        "",
        invalid_tool_calls=[
            {
                "name": "multiply",
                "args": '{"a": 1, "b": }',
                "id": "c9",
                "error": "x",
                "type": "invalid_tool_call",
            }
        ],
    )
    server.model().bind_tools([multiply]).invoke([HumanMessage("q"), bad, HumanMessage("again")])
    assistant = server.requests[0]["messages"][1]
    assert "tool_calls" not in assistant
    assert (
        assistant["content"]
        == '<tool_call>\n{"name": "multiply", "arguments": {"a": 1, "b": }}\n</tool_call>'
    )


@pytest.mark.parametrize(
    ("choice", "names"), [("any", {"multiply", "lake_depth"}), ("lake_depth", {"lake_depth"})]
)
def test_forced_tool_choice_becomes_a_json_schema_grammar(choice: str, names: set[str]) -> None:
    server = FakeServer(['{"name": "lake_depth", "arguments": {"lake": "Lake Van"}}'])
    reply = server.model().bind_tools([multiply, lake_depth], tool_choice=choice).invoke("depth?")
    assert [c["name"] for c in reply.tool_calls] == ["lake_depth"]
    body = server.requests[0]
    assert "tool_choice" not in body  # the server's own grammar pads the reply to max_tokens
    options = body["json_schema"]["anyOf"]
    assert {o["properties"]["name"]["const"] for o in options} == names
    assert all(o["required"] == ["name", "arguments"] for o in options)


def test_without_tools_replies_are_not_parsed() -> None:
    text = '{"name": "multiply", "arguments": {"a": 1, "b": 2}}'
    reply = FakeServer([text]).model().invoke("Give me JSON")
    assert reply.content == text and reply.tool_calls == []


def test_stays_an_openai_model_for_sampling() -> None:
    # sample_n asks OpenAI-compatible models for n choices in one request.
    assert isinstance(FakeServer([]).model(), ChatOpenAI)


# --- replies: sync, async, streamed --------------------------------------------------


def _check_fenced(message: AIMessage) -> None:
    assert message.content == "Let me compute it."
    assert [(c["name"], c["args"]) for c in message.tool_calls] == [
        ("multiply", {"a": 12, "b": 34})
    ]
    assert message.invalid_tool_calls == []
    assert message.usage_metadata and message.usage_metadata["input_tokens"] == 100


def test_invoke_parses_calls() -> None:
    _check_fenced(FakeServer([FENCED]).model().bind_tools([multiply]).invoke("12*34?"))


async def test_ainvoke_parses_calls() -> None:
    _check_fenced(await FakeServer([FENCED]).model().bind_tools([multiply]).ainvoke("12*34?"))


def test_stream_holds_back_call_text_and_yields_calls_at_the_end() -> None:
    server = FakeServer([FENCED])
    chunks = list(server.model().bind_tools([multiply]).stream("12*34?"))
    assert server.requests[0]["stream"] is True
    assert len(chunks) > 3  # the prose really streamed
    assert all("{" not in str(c.content) and "`" not in str(c.content) for c in chunks)
    total = chunks[0]
    for c in chunks[1:]:
        total += c
    assert isinstance(total, AIMessageChunk)
    _check_fenced(total)  # type: ignore[arg-type]


async def test_astream_yields_calls_at_the_end() -> None:
    chunks = [c async for c in FakeServer([FENCED]).model().bind_tools([multiply]).astream("q")]
    total = chunks[0]
    for c in chunks[1:]:
        total += c
    _check_fenced(total)  # type: ignore[arg-type]


def test_the_model_runs_one_step_of_a_planned_reply() -> None:
    reply = FakeServer([PLAN]).model().bind_tools([multiply, lake_depth]).invoke("Van?")
    assert [c["name"] for c in reply.tool_calls] == ["lake_depth"]
    assert "123" not in str(reply.content)
    assert reply.response_metadata["dropped_after_tool_calls"].endswith("123 meters deep.")
    chunks = list(FakeServer([PLAN]).model().bind_tools([multiply, lake_depth]).stream("Van?"))
    total = chunks[0]
    for c in chunks[1:]:
        total += c
    assert [c["name"] for c in total.tool_calls] == ["lake_depth"]  # type: ignore[attr-defined]
    assert total.content == reply.content
    every = FakeServer([PLAN]).model(drop_after_calls=False).bind_tools([multiply, lake_depth])
    assert len(every.invoke("Van?").tool_calls) == 2


BROKEN = '```json\n{"name": "multiply", "arguments": {"a": 12 "b": 34}}\n```'


def test_an_unreadable_call_is_sent_back_once_with_the_error() -> None:
    server = FakeServer([BROKEN, FENCED])
    reply = server.model().bind_tools([multiply]).invoke("12*34?")
    assert [c["name"] for c in reply.tool_calls] == ["multiply"]
    assert len(server.requests) == 2
    retry = server.requests[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": BROKEN}
    assert retry[-1]["role"] == "user" and "not valid JSON" in retry[-1]["content"]
    assert "<tool_call>" in retry[-1]["content"]
    assert reply.usage_metadata and reply.usage_metadata["input_tokens"] == 200  # both attempts
    assert "not valid JSON" in reply.response_metadata["retried_tool_call_errors"][0]


async def test_astream_retries_an_unreadable_call() -> None:
    server = FakeServer([BROKEN, FENCED])
    chunks = [c async for c in server.model().bind_tools([multiply]).astream("q")]
    total = chunks[0]
    for c in chunks[1:]:
        total += c
    assert len(server.requests) == 2
    assert [c["name"] for c in total.tool_calls] == ["multiply"]  # type: ignore[attr-defined]


def test_still_unreadable_after_retries_comes_back_as_invalid_tool_calls() -> None:
    server = FakeServer([BROKEN, BROKEN])
    reply = server.model().bind_tools([multiply]).invoke("12*34?")
    assert len(server.requests) == 2
    assert reply.tool_calls == [] and reply.content == ""
    [bad] = reply.invalid_tool_calls
    assert bad["name"] == "multiply" and "not valid JSON" in str(bad["error"])
    assert "not valid JSON" in reply.response_metadata["tool_call_errors"][0]


def test_streamed_unreadable_call_stays_invalid() -> None:
    server = FakeServer(['<tool_call>{"name": "multiply", "arguments": {"a": 1</tool_call>'])
    chunks = list(server.model(tool_call_retries=0).bind_tools([multiply]).stream("q"))
    total = chunks[0]
    for c in chunks[1:]:
        total += c
    # LangChain re-reads streamed arguments leniently; the truncated call must not run.
    assert total.tool_calls == []  # type: ignore[attr-defined]
    assert [c["name"] for c in total.invalid_tool_calls] == ["multiply"]  # type: ignore[attr-defined]
    assert "not valid JSON" in total.response_metadata["tool_call_errors"][0]


# --- create_agent ------------------------------------------------------------------


def _agent_replies() -> list[str]:
    return [
        '```json\n{"name": "lake_depth", "arguments": {"lake": "Lake Van"}}\n```',
        "Lake Van is 451 m deep.",
    ]


def test_create_agent_runs_the_parsed_call() -> None:
    server = FakeServer(_agent_replies())
    agent = create_agent(server.model(), [lake_depth], system_prompt="Use the tools.")
    out = agent.invoke({"messages": [HumanMessage("How deep is Lake Van?")]})
    tool_msg = out["messages"][2]
    assert isinstance(tool_msg, ToolMessage) and tool_msg.content == "451 m"
    assert out["messages"][-1].content == "Lake Van is 451 m deep."
    second = server.requests[1]["messages"]
    assert second[0] == {"role": "system", "content": "Use the tools."}
    assert second[-2]["role"] == "tool" and second[-2]["content"] == "451 m"
    assert second[-3]["tool_calls"][0]["function"]["name"] == "lake_depth"
    assert second[-1]["content"].startswith("Question: How deep is Lake Van?\n")


async def test_create_agent_streams_messages_with_the_calls() -> None:
    server = FakeServer(_agent_replies())
    agent = create_agent(server.model(), [lake_depth])
    tokens: list[str] = []
    final: dict[str, Any] = {}
    async for mode, chunk in agent.astream(
        {"messages": [HumanMessage("How deep is Lake Van?")]}, stream_mode=["messages", "values"]
    ):
        if mode == "messages":
            tokens.append(str(chunk[0].content))
        else:
            final = chunk
    assert all(server.requests[i]["stream"] for i in range(2))  # the model really streamed
    assert "".join(tokens).endswith("451 m deep.") and "{" not in "".join(tokens)
    assert [type(m).__name__ for m in final["messages"]] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
    ]
    assert final["messages"][2].content == "451 m"


def test_create_agent_tells_the_model_about_an_unknown_tool() -> None:
    server = FakeServer(
        [
            '{"name": "depth_of_lake", "arguments": {"lake": "Lake Van"}}',
            '{"name": "lake_depth", "arguments": {"lake": "Lake Van"}}',
            "451 m",
        ]
    )
    out = create_agent(server.model(), [lake_depth]).invoke({"messages": [HumanMessage("Van?")]})
    error = out["messages"][2]
    assert isinstance(error, ToolMessage) and error.status == "error"
    assert "depth_of_lake is not a valid tool" in str(error.content)
    assert "lake_depth" in str(error.content)
    assert out["messages"][4].content == "451 m" and out["messages"][-1].content == "451 m"
    assert len(server.requests) == 3


# --- the real embedded model ----------------------------------------------------------


def _lakes_tool() -> Any:
    from importlib.resources import files

    from tablerag_agents.tables import load_table

    df = load_table(Path(str(files("tablerag_agents") / "data" / "lakes_of_turkey.csv"))).df

    @tool
    def lake_facts(lake: str) -> str:
        """Return the lakes-of-Turkey table row of one lake (English name, e.g. "Lake Tuz")."""
        rows = df[df["Name in English"].str.lower() == lake.strip().lower()]
        if rows.empty:
            return f"No lake named {lake!r}; names look like: " + ", ".join(
                df["Name in English"][:5]
            )
        return rows.to_json(orient="records", force_ascii=False)

    return lake_facts


@pytest.mark.slow
def test_embedded_server_renders_tools_and_results_in_the_qwen_format() -> None:
    from tablerag_agents.config import Settings
    from tablerag_agents.models import get_chat_model

    model = get_chat_model(Settings(llm_cache=False))
    assert isinstance(model, EmbeddedChatModel)
    payload = model.bind_tools([multiply])._get_request_payload(  # type: ignore[attr-defined]
        [
            HumanMessage("What is 12 times 34?"),
            AIMessage(
                "", tool_calls=[{"name": "multiply", "args": {"a": 12, "b": 34}, "id": "c1"}]
            ),
            ToolMessage("408", tool_call_id="c1"),
        ],
        **model.bind_tools([multiply]).kwargs,  # type: ignore[attr-defined]
    )
    key = model.openai_api_key.get_secret_value()  # type: ignore[union-attr]
    root = str(model.openai_api_base).removesuffix("/v1")
    response = httpx.post(
        f"{root}/apply-template",
        json={"messages": payload["messages"], "tools": payload["tools"]},
        headers={"Authorization": f"Bearer {key}"},
        timeout=60,
    )
    prompt = response.json()["prompt"]
    assert (
        "# Tools" in prompt
        and '<tools>\n{"type": "function", "function": {"name": "multiply"' in prompt
    )
    assert (
        '<tool_call>\n{"name": "multiply", "arguments": {"a": 12, "b": 34}}\n</tool_call>' in prompt
    )
    assert "<|im_start|>user\n<tool_response>\n408\n</tool_response><|im_end|>" in prompt
    assert prompt.endswith(
        "Question: What is 12 times 34?\nReply with the answer itself (the name, number or "
        "date asked for) taken from the tool results above, or call a tool if they do not "
        "contain it.<|im_end|>\n<|im_start|>assistant\n"
    )


@pytest.mark.slow
def test_create_agent_with_the_embedded_model_answers_from_a_tool() -> None:
    from tablerag_agents.config import Settings
    from tablerag_agents.models import get_chat_model

    agent = create_agent(
        get_chat_model(Settings(llm_cache=False)),
        [_lakes_tool()],
        system_prompt="Answer questions about lakes in Turkey. Use the tools, then answer briefly.",
    )
    out = agent.invoke({"messages": [HumanMessage("How deep is Lake Tuz?")]})
    calls = [c for m in out["messages"] if isinstance(m, AIMessage) for c in m.tool_calls]
    assert calls and calls[0]["name"] == "lake_facts"
    assert "Tuz" in calls[0]["args"]["lake"]
    answer = out["messages"][-1]
    assert isinstance(answer, AIMessage) and not answer.tool_calls
    assert "2 m" in str(answer.content) or "2 meters" in str(answer.content)


@pytest.mark.slow
async def test_create_agent_with_the_embedded_model_streams() -> None:
    from tablerag_agents.config import Settings
    from tablerag_agents.models import get_chat_model

    agent = create_agent(get_chat_model(Settings(llm_cache=False)), [multiply])
    tokens, final = [], {}
    async for mode, chunk in agent.astream(
        {"messages": [HumanMessage("What is 17 times 23? Use the tool.")]},
        stream_mode=["messages", "values"],
    ):
        if mode == "messages":
            tokens.append(str(chunk[0].content))
        else:
            final = chunk
    tool_results = [m for m in final["messages"] if isinstance(m, ToolMessage)]
    assert tool_results and tool_results[0].content == "391"
    assert "391" in str(final["messages"][-1].content)
    assert "391" in "".join(tokens)
