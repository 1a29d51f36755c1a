"""One model call with its token usage and latency."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable


@dataclass
class LLMReply:
    """One model reply with its token usage and latency."""

    message: AIMessage
    input_tokens: int
    output_tokens: int
    seconds: float
    cached_tokens: int = 0
    """Prompt tokens the server reused from its prefix cache (when it reports them)."""

    @property
    def text(self) -> str:
        """The reply text (list contents joined)."""
        content = self.message.content
        if isinstance(content, str):
            return content
        return "".join(c if isinstance(c, str) else str(c.get("text", "")) for c in content)


def call_model(
    model: Runnable[Any, Any], messages: Sequence[BaseMessage], *, stop: list[str] | None = None
) -> LLMReply:
    """Invoke ``model`` and read token usage from the reply's ``usage_metadata``."""
    started = time.perf_counter()
    message = model.invoke(list(messages), stop=stop) if stop else model.invoke(list(messages))
    seconds = time.perf_counter() - started
    if not isinstance(message, AIMessage):
        message = AIMessage(content=str(getattr(message, "content", message)))
    usage: dict[str, Any] = dict(message.usage_metadata or {})
    details = usage.get("input_token_details") or {}
    return LLMReply(
        message=message,
        input_tokens=int(usage.get("input_tokens", 0)),
        output_tokens=int(usage.get("output_tokens", 0)),
        seconds=seconds,
        cached_tokens=int(details.get("cache_read", 0) or 0),
    )


RETRY_SEED = 0
"""Sampling seed of retries: the same question and conversation get the same retry, so two
runs of an evaluation differ only where their code does (models that ignore it still work)."""


def retry_model(model: Runnable[Any, Any], temperature: float | None) -> Runnable[Any, Any]:
    """``model`` sampling at ``temperature`` with a fixed seed (for retries), or unchanged
    if None."""
    if temperature is None:
        return model
    return model.bind(temperature=temperature, seed=RETRY_SEED)
