"""Draw several samples of one prompt (self-consistency) as cheaply as the model allows."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_openai import ChatOpenAI


def sample_n(
    model: BaseChatModel, messages: Sequence[BaseMessage], n: int, *, temperature: float = 0.7
) -> list[str]:
    """Return ``n`` sampled completions of ``messages``.

    OpenAI-compatible models get one request with ``n`` choices: the prompt is
    processed once and the samples decode together in the server's parallel
    slots. Other models get ``n`` concurrent calls with distinct seeds (distinct
    seeds also keep the LLM cache from returning one answer ``n`` times).
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if isinstance(model, ChatOpenAI):
        result = model.generate([list(messages)], n=n, temperature=temperature)
        return [str(g.text) for g in result.generations[0]]
    bound = [model.bind(temperature=temperature, seed=i) for i in range(n)]
    replies = [b.invoke(list(messages)) for b in bound] if n == 1 else _parallel(bound, messages)
    return [str(r.content) for r in replies]


def _parallel(bound: list, messages: Sequence[BaseMessage]) -> list:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(len(bound)) as pool:
        return list(pool.map(lambda b: b.invoke(list(messages)), bound))
