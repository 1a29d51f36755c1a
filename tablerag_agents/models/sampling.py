"""Draw several samples of one prompt (self-consistency) as cheaply as the model allows."""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable, RunnableBinding

from tablerag_agents.models.calls import LLMReply, call_model
from tablerag_agents.models.tokens import count_tokens


def sample_replies(
    model: Runnable[Any, Any],
    messages: Sequence[BaseMessage],
    n: int,
    temperature: float,
    *,
    concurrent: bool = False,
) -> list[LLMReply]:
    """Draw ``n`` sampled replies, in one request when the model is OpenAI-compatible.

    One request with ``n`` choices lets the server process the prompt once and
    decode the samples together. Its token usage is put on the first reply.
    Other models get ``n`` calls with distinct seeds (distinct seeds also keep
    the LLM cache from returning one answer ``n`` times), one after the other
    or, with ``concurrent``, in ``n`` threads.
    """
    from langchain_openai import ChatOpenAI

    base, kwargs = (
        (model.bound, dict(model.kwargs))
        if isinstance(model, RunnableBinding)
        else (
            model,
            {},
        )
    )
    if n > 1 and isinstance(base, ChatOpenAI):
        started = time.perf_counter()
        result = base.generate([list(messages)], n=n, **{**kwargs, "temperature": temperature})
        seconds = time.perf_counter() - started
        gens = result.generations[0]
        replies = [
            LLMReply(message=AIMessage(g.text), input_tokens=0, output_tokens=0, seconds=0.0)
            for g in gens
        ]
        first = getattr(gens[0], "message", None)
        usage: dict[str, Any] = dict(getattr(first, "usage_metadata", None) or {})
        details = usage.get("input_token_details") or {}
        # Some servers report the completion tokens of one choice only: never
        # count less than an estimate of all the choices' text.
        estimate = sum(count_tokens(g.text) for g in gens)
        replies[0].input_tokens = int(usage.get("input_tokens", 0))
        replies[0].output_tokens = max(int(usage.get("output_tokens", 0)), estimate)
        replies[0].cached_tokens = int(details.get("cache_read", 0) or 0)
        replies[0].seconds = seconds
        return replies
    bound = [model.bind(temperature=temperature, seed=i) for i in range(n)]
    if not concurrent or n < 2:
        return [call_model(b, messages) for b in bound]
    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(lambda b: call_model(b, messages), bound))


def sample_n(
    model: BaseChatModel, messages: Sequence[BaseMessage], n: int, *, temperature: float = 0.7
) -> list[str]:
    """Return the texts of ``n`` sampled completions of ``messages``.

    OpenAI-compatible models get one request with ``n`` choices: the prompt is
    processed once and the samples decode together in the server's parallel
    slots. Other models get ``n`` concurrent calls with distinct seeds.
    :func:`sample_replies` also reports token usage.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return [r.text for r in sample_replies(model, messages, n, temperature, concurrent=True)]
