"""Draw several samples of one prompt (self-consistency) as cheaply as the model allows."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from tablerag_agents.solve.llm_calls import sample_replies


def sample_n(
    model: BaseChatModel, messages: Sequence[BaseMessage], n: int, *, temperature: float = 0.7
) -> list[str]:
    """Return the texts of ``n`` sampled completions of ``messages``.

    OpenAI-compatible models get one request with ``n`` choices: the prompt is
    processed once and the samples decode together in the server's parallel
    slots. Other models get ``n`` concurrent calls with distinct seeds. The
    solvers use :func:`~tablerag_agents.solve.llm_calls.sample_replies`, which
    also reports token usage.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return [r.text for r in sample_replies(model, messages, n, temperature, concurrent=True)]
