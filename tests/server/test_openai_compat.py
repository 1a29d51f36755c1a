"""The OpenAI-compatible endpoint, driven by unchanged SDKs: ChatOpenAI, openai, raw HTTP."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from fake_model import (
    ProgramChatModel,
    expected_total,
    lookup_question,
    numbers_resources,
    question,
)
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from pydantic import Field
from tablerag_agents.graphs import Context

SENTENCE = "The n whose value is 100 is 10."


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


class SentenceModel(ProgramChatModel):
    """Also writes the answer sentence, word by word, pausing after ``pause_after`` words.

    The pause lasts until ``release`` is set (at most ``pause_s``); ``paused`` is
    set while it lasts, so a test can tell the model is still writing.
    """

    pause_after: int = 3
    pause_s: float = 5.0
    release: threading.Event = Field(default_factory=threading.Event)
    paused: threading.Event = Field(default_factory=threading.Event)

    def reply_for(self, messages: list[BaseMessage]) -> str:
        """The sentence for the answer-sentence prompt (a second line the graph drops)."""
        prompt = next((str(m.content) for m in messages if m.type == "human"), "")
        if "Write one short sentence" in prompt:
            return f"  {SENTENCE}\nA second line.\n"
        return super().reply_for(messages)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        text = self.reply_for(messages)
        words = re.findall(r"\s*\S+\s*", text)
        for i, word in enumerate(words):
            if SENTENCE in text and i == self.pause_after:
                self.paused.set()
                self.release.wait(self.pause_s)
                self.paused.clear()
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=word))
            if run_manager is not None:
                run_manager.on_llm_new_token(word, chunk=chunk)
            yield chunk


def _sentence_server(serve, model: SentenceModel):
    return serve(
        resources=numbers_resources(model), context=Context(solver="sql", write_sentence=True)
    )


def _body(content: str) -> dict[str, Any]:
    return {"model": "tablerag", "stream": True, "messages": [{"role": "user", "content": content}]}


def test_the_sentence_streams_while_the_model_writes_it(serve) -> None:
    model = SentenceModel()
    live = _sentence_server(serve, model)
    received: list[tuple[str, bool]] = []  # (content, was the model still paused mid-sentence?)
    with live.client() as client:
        with client.stream("POST", "/v1/chat/completions", json=_body(lookup_question(100))) as r:
            for line in r.iter_lines():
                if not line.startswith("data: {"):
                    continue
                chunk = json.loads(line[6:])
                content = chunk["choices"][0]["delta"].get("content") if chunk["choices"] else ""
                if content:
                    received.append((content, model.paused.is_set()))
                    if len(received) == model.pause_after:
                        model.release.set()  # let the model finish the sentence
    early = [content for content, paused in received if paused]
    assert len(early) == model.pause_after >= 3, received  # several chunks before the last word
    assert early == ["The", " n", " whose"]
    assert "".join(content for content, _ in received) == SENTENCE  # the first line, once


def test_node_progress_streams_as_comments_before_the_reply(serve) -> None:
    with serve().client() as client:
        with client.stream("POST", "/v1/chat/completions", json=_body(question(4))) as response:
            lines = [line for line in response.iter_lines() if line]
    comments = [
        json.loads(x.removeprefix(": tablerag ")) for x in lines if x.startswith(": tablerag ")
    ]
    first_content = next(i for i, x in enumerate(lines) if '"content": "The"' in x)
    solved = next(i for i, x in enumerate(lines) if x.startswith(': tablerag {"event": "node"'))
    assert solved < first_content  # progress arrives while the run goes, before the reply
    nodes = [c["node"] for c in comments if c["event"] == "node"]
    assert nodes == ["prepare", "solve", "answer"]
    assert all(c["seconds"] >= 0 for c in comments if c["event"] == "node")
    assert {"event": "step", "node": "solve", "step": "sql"} in comments
    text = "".join(
        json.loads(x[6:])["choices"][0]["delta"].get("content") or ""
        for x in lines
        if x.startswith("data: {") and json.loads(x[6:])["choices"]
    )
    assert text == f"The answer is {expected_total(4)}."


def test_the_openai_sdk_reads_the_streamed_sentence(serve) -> None:
    model = SentenceModel(pause_s=0.0)
    live = _sentence_server(serve, model)
    client = openai.OpenAI(base_url=f"{live.url}/v1", api_key="unused", max_retries=0)
    chunks = list(
        client.chat.completions.create(
            model="tablerag",
            messages=[{"role": "user", "content": lookup_question(100)}],
            stream=True,
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == SENTENCE
    final = chunks[-1]
    assert final.choices[0].finish_reason == "stop"
    assert final.model_extra["tablerag"]["sentence"] == SENTENCE


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return "sunny"


def test_a_request_with_tools_is_refused_with_400(serve) -> None:
    live = serve()
    with live.client() as client:
        for field in ("tools", "functions"):
            body = {
                "model": "tablerag",
                "messages": [{"role": "user", "content": question(2)}],
                field: [{"type": "function", "function": {"name": "f", "parameters": {}}}],
            }
            response = client.post("/v1/chat/completions", json=body)
            assert response.status_code == 400
            error = response.json()["error"]
            assert error["code"] == "tools_not_supported"
            assert f"'{field}' is not supported" in error["message"]
            assert "ask_tables" in error["message"]
        empty = {"model": "tablerag", "messages": [{"role": "user", "content": question(2)}]}
        assert client.post("/v1/chat/completions", json={**empty, "tools": []}).status_code == 200
    with pytest.raises(openai.BadRequestError, match="'tools' is not supported"):
        _chat(live).bind_tools([get_weather]).invoke(question(2))
