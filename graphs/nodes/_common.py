"""Small helpers shared by the graph's nodes."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.runtime import Runtime
from tablerag_agents.graphs.context import Context

from tablerag_agents.resources import Resources

ResourcesGetter = Callable[[], Resources]
"""Returns the resources a node uses (resolved at run time, not at import)."""

_JSON_OBJECT = re.compile(r"\{.*\}", re.S)


def context_of(runtime: Runtime[Any] | None) -> Context:
    """The run's :class:`Context` (defaults when none was given; a dict is converted)."""
    ctx = getattr(runtime, "context", None)
    if ctx is None:
        return Context()
    if isinstance(ctx, dict):
        return Context.from_dict(ctx)
    if not isinstance(ctx, Context):
        raise TypeError(f"the graph's context must be a Context or a dict, not {type(ctx)}")
    return ctx


def progress(runtime: Runtime[Any] | None, node: str, **event: Any) -> None:
    """Send a progress event on the "custom" stream (a no-op outside a streamed run)."""
    writer = getattr(runtime, "stream_writer", None)
    if writer is not None:
        writer({"node": node, **event})


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in a model reply (fenced or not), or None."""
    match = _JSON_OBJECT.search(text or "")
    if match is None:
        return None
    candidate = match.group(0)
    for end in range(len(candidate), 0, -1):
        if candidate[end - 1] != "}":
            continue
        try:
            value = json.loads(candidate[:end])
        except json.JSONDecodeError:
            continue
        return value if isinstance(value, dict) else None
    return None


def string_list(value: Any, limit: int) -> list[str]:
    """Up to ``limit`` distinct non-empty strings from a model's JSON list."""
    if not isinstance(value, list):
        return []
    out: list[str] = []
    for item in value:
        text = " ".join(str(item).split()) if isinstance(item, str | int | float) else ""
        if text and text not in out:
            out.append(text)
    return out[:limit]


def text_of(message: AnyMessage) -> str:
    """A message's text content."""
    return message.text if isinstance(message.content, list) else str(message.content)


def earlier_turns(messages: list[AnyMessage]) -> list[tuple[str, str]]:
    """(question, answer) pairs of the finished turns, oldest first."""
    turns: list[tuple[str, str]] = []
    pending: str | None = None
    for message in messages:
        if isinstance(message, HumanMessage):
            pending = text_of(message)
        elif isinstance(message, AIMessage) and pending is not None and not message.tool_calls:
            turns.append((pending, text_of(message)))
            pending = None
    return turns


def ask(model: BaseChatModel, prompt: str) -> str:
    """One user-message call; the reply's text."""
    reply = model.invoke([HumanMessage(prompt)])
    return text_of(reply)
