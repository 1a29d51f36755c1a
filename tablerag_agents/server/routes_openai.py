"""OpenAI-compatible chat completions whose "model" is the TableRAG graph.

``POST /v1/chat/completions`` answers the last user message over the service's
tables (earlier messages are the conversation; nothing is stored), so OpenAI
SDKs and chat front ends work unchanged. The reply's ``content`` is the answer
sentence; the full answer (text, items, cited cells, confidence, solver,
tables) is in the extra top-level field ``tablerag`` of the completion and of
the last streamed chunk. An optional extra request field ``tables`` (ids) picks
the tables. Streamed, the reply arrives as it is written and node progress as
SSE comments (:mod:`tablerag_agents.server.openai_stream`). The graph calls no
client tools: a request with ``tools`` is refused (400).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from pydantic import BaseModel, ConfigDict, Field

from tablerag_agents.graphs import InputState, TableQAResult
from tablerag_agents.server.auth import ClientDep
from tablerag_agents.server.errors import ApiError, error_body
from tablerag_agents.server.openai_stream import (
    ANSWER_NODE,
    ReplyWriter,
    pieces,
    progress_comment,
)
from tablerag_agents.server.runs import GraphRun, reply_of
from tablerag_agents.server.schemas import MAX_QUESTION_CHARS
from tablerag_agents.server.sse import encode_event, sse_response
from tablerag_agents.server.state import StateDep

MODEL_ID = "tablerag"
_IGNORED_ROLES = {"system", "developer", "tool", "function"}
_TOOL_FIELDS = ("tools", "functions")


class ChatMessage(BaseModel):
    """One message of the conversation (OpenAI format; text content only)."""

    model_config = ConfigDict(extra="allow")

    role: str
    content: str | list[dict[str, Any]] | None = None


class ChatCompletionRequest(BaseModel):
    """The OpenAI request; sampling options are accepted and ignored."""

    model_config = ConfigDict(extra="allow")

    model: str
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    n: int = 1
    tables: list[str] | None = Field(default=None, description="Table ids to answer over.")


def _text(message: ChatMessage) -> str:
    if message.content is None or isinstance(message.content, str):
        return message.content or ""
    parts = []
    for part in message.content:
        if part.get("type") != "text":
            raise ApiError(422, f"only text content is supported, not {part.get('type')!r}")
        parts.append(str(part.get("text", "")))
    return "\n".join(parts)


def conversation(request: ChatCompletionRequest) -> list[AnyMessage]:
    """The graph's messages: user and assistant turns, the question last.

    Raises:
        ApiError: 422 for an unknown role, non-text content, or a missing or
            empty final user message.
    """
    out: list[AnyMessage] = []
    for message in request.messages:
        if message.role in _IGNORED_ROLES:
            continue
        text = _text(message)
        if message.role == "user":
            out.append(HumanMessage(text))
        elif message.role == "assistant":
            out.append(AIMessage(text))
        else:
            raise ApiError(422, f"unknown message role {message.role!r}")
    if not out or not isinstance(out[-1], HumanMessage):
        raise ApiError(422, "the last message must be a user message holding the question")
    question = str(out[-1].content).strip()
    if not question:
        raise ApiError(422, "the question is empty")
    if len(question) > MAX_QUESTION_CHARS:
        raise ApiError(422, f"the question is longer than {MAX_QUESTION_CHARS} characters")
    return out


def _usage(values: dict[str, Any]) -> dict[str, int]:
    result = TableQAResult.from_output(values)
    prompt, completion = result.input_tokens, result.output_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _chunk(base: dict[str, Any], delta: dict[str, Any], finish: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
    return encode_event({**base, "object": "chat.completion.chunk", "choices": [choice]})


def refuse_tools(request: ChatCompletionRequest) -> None:
    """Refuse client tools: the graph would ignore them, and the caller would wait in vain.

    Raises:
        ApiError: 400 naming the field, when ``tools`` or ``functions`` is not empty.
    """
    extra = request.model_extra or {}
    for name in _TOOL_FIELDS:
        if extra.get(name):
            raise ApiError(
                400,
                f"'{name}' is not supported: the model {MODEL_ID!r} is the TableRAG graph, "
                "which answers from the tables and never calls client tools. Send the "
                f"request without '{name}', or give your agent the graph as a tool "
                "(the toolkit's ask_tables; see the README).",
                "tools_not_supported",
            )


async def _stream(run: GraphRun, base: dict[str, Any], include_usage: bool) -> AsyncIterator[str]:
    """The completion as ``chat.completion.chunk`` events while the run goes, then ``[DONE]``."""
    yield _chunk(base, {"role": "assistant", "content": ""})
    writer = ReplyWriter()
    async for event in run.events():
        if event.event == "token" and event.data.get("node") == ANSWER_NODE:
            for piece in pieces(writer.feed(event.data)):
                yield _chunk(base, {"content": piece})
        elif (comment := progress_comment(event)) is not None:
            yield comment
    try:
        values = await run.result()
    except ApiError as exc:
        yield encode_event(error_body(exc.status, exc.message, exc.code))
        yield encode_event("[DONE]")
        return
    reply = reply_of(values)
    for piece in pieces(writer.rest(reply["content"])):
        yield _chunk(base, {"content": piece})
    yield encode_event(
        {
            **base,
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop", "logprobs": None}],
            "tablerag": reply["answer"],
        }
    )
    if include_usage:
        usage_chunk = {**base, "object": "chat.completion.chunk", "choices": []}
        yield encode_event({**usage_chunk, "usage": _usage(values)})
    yield encode_event("[DONE]")


def openai_router(max_json_bytes: int) -> APIRouter:
    """The ``/v1`` routes (JSON bodies limited to ``max_json_bytes``)."""
    router = APIRouter(prefix="/v1", tags=["openai"], max_body_size=max_json_bytes)

    @router.get("/models")
    async def list_models() -> dict[str, Any]:
        """The one model: the TableRAG graph over the service's tables."""
        model = {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "tablerag-agents"}
        return {"object": "list", "data": [model]}

    @router.post("/chat/completions", response_model=None)
    async def chat_completions(
        body: ChatCompletionRequest, state: StateDep, client: ClientDep
    ) -> dict[str, Any] | Response:
        """Answer the last user message over the tables (OpenAI chat completions format)."""
        if body.model != MODEL_ID:
            raise ApiError(
                404, f"the model {body.model!r} does not exist; use {MODEL_ID!r}", "model_not_found"
            )
        if body.n != 1:
            raise ApiError(422, "n must be 1")
        refuse_tools(body)
        messages = conversation(body)
        tables = await state.check_tables(body.tables or [], client)
        state.check_answerable(tables, client)
        inputs: InputState = {"messages": messages}
        if tables:
            inputs["tables"] = tables
        context = state.run_context(client)
        run = state.runs.start(GraphRun(state.stateless_graph, inputs, context=context))
        base = {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "created": int(time.time()),
            "model": MODEL_ID,
        }
        if body.stream:
            include_usage = bool((body.stream_options or {}).get("include_usage"))
            return sse_response(_stream(run, base, include_usage))
        values = await run.result()
        reply = reply_of(values)
        message = {"role": "assistant", "content": reply["content"], "refusal": None}
        return {
            **base,
            "object": "chat.completion",
            "choices": [
                {"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}
            ],
            "usage": _usage(values),
            "tablerag": reply["answer"],
        }

    return router
