"""The OpenAI-compatible endpoint, driven by unchanged SDKs: ChatOpenAI, openai, raw HTTP."""

from __future__ import annotations

import json

import openai
import pytest
from fake_model import expected_total, lookup_question, question
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI


def _chat(live, api_key: str = "unused") -> ChatOpenAI:
    return ChatOpenAI(base_url=f"{live.url}/v1", api_key=api_key, model="tablerag", max_retries=0)


def test_chat_openai_invoke_and_stream(serve) -> None:
    chat = _chat(serve())
    reply = chat.invoke(question(10))
    assert reply.content == "The answer is 385."
    assert reply.usage_metadata is not None and reply.usage_metadata["input_tokens"] > 0
    chunks = list(chat.stream(question(11)))
    assert "".join(str(c.content) for c in chunks) == f"The answer is {expected_total(11)}."
    assert sum(1 for c in chunks if c.content) >= 4  # word by word
    assert any(c.response_metadata.get("finish_reason") == "stop" for c in chunks)


def test_earlier_messages_are_the_conversation(serve) -> None:
    chat = _chat(serve())
    reply = chat.invoke(
        [
            SystemMessage("You are a helpful assistant."),
            HumanMessage(question(10)),
            AIMessage("The answer is 385."),
            HumanMessage("and the total of value for n up to 3?"),
        ]
    )
    assert reply.content == "The answer is 14."


def test_the_openai_sdk_sees_the_cited_cells(serve) -> None:
    live = serve()
    client = openai.OpenAI(base_url=f"{live.url}/v1", api_key="unused", max_retries=0)
    assert [m.id for m in client.models.list()] == ["tablerag"]
    completion = client.chat.completions.create(
        model="tablerag", messages=[{"role": "user", "content": lookup_question(100)}]
    )
    assert completion.object == "chat.completion"
    assert completion.choices[0].message.content.startswith("The answer is 10")
    extra = completion.model_extra["tablerag"]
    assert extra["text"] == "10" and extra["cited_cells"][0]["value"] == "10"
    stream = client.chat.completions.create(
        model="tablerag",
        messages=[{"role": "user", "content": lookup_question(100)}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    final = next(c for c in chunks if c.choices and c.choices[0].finish_reason == "stop")
    assert final.model_extra["tablerag"]["cited_cells"][0]["column"] == "n"
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens > 0


def test_raw_stream_is_chunks_then_done(serve) -> None:
    with serve().client() as client:
        body = {
            "model": "tablerag",
            "stream": True,
            "messages": [{"role": "user", "content": question(2)}],
        }
        with client.stream("POST", "/v1/chat/completions", json=body) as response:
            data = [line[6:] for line in response.iter_lines() if line.startswith("data: ")]
    assert data[-1] == "[DONE]"
    chunks = [json.loads(d) for d in data[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert len({c["id"] for c in chunks}) == 1
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    assert text == "The answer is 5."


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}, 404, "gpt-4o"),
        ({"model": "tablerag", "messages": []}, 422, "messages"),
        ({"model": "tablerag", "messages": [{"role": "user", "content": " "}]}, 422, "empty"),
        (
            {"model": "tablerag", "messages": [{"role": "assistant", "content": "hello"}]},
            422,
            "last message must be a user message",
        ),
        (
            {
                "model": "tablerag",
                "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}],
            },
            422,
            "only text content",
        ),
        (
            {
                "model": "tablerag",
                "tables": ["nope"],
                "messages": [{"role": "user", "content": "x"}],
            },
            422,
            "unknown table",
        ),
    ],
)
def test_bad_completion_requests(serve, body: dict, status: int, message: str) -> None:
    with serve().client() as client:
        response = client.post("/v1/chat/completions", json=body)
        assert response.status_code == status
        assert message in response.json()["error"]["message"]


def test_the_token_is_the_api_key(serve) -> None:
    live = serve(token="s3cret")
    assert _chat(live, api_key="s3cret").invoke(question(1)).content == "The answer is 1."
    with pytest.raises(openai.AuthenticationError, match="invalid bearer token"):
        _chat(live, api_key="wrong").invoke(question(1))
    with pytest.raises(openai.NotFoundError, match="does not exist"):
        ChatOpenAI(base_url=f"{live.url}/v1", api_key="s3cret", model="gpt-4o").invoke("hi")
