"""Per-node trace records: time, prompt and completion tokens, what the node produced."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import ChatGeneration, LLMResult
from langchain_core.tracers.context import register_configure_hook
from langgraph.runtime import Runtime
from tablerag_agents.graphs.context import Context
from tablerag_agents.graphs.state import State


class Node(Protocol):
    """A node: the state and the run's runtime in, a partial state update out."""

    def __call__(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]: ...


_SUMMARY_CHARS = 300
_SKIPPED = {"messages", "trace"}


class TokenCounter(BaseCallbackHandler):
    """Adds up the prompt and completion tokens of every chat model call it sees."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self.input_tokens = 0
        self.output_tokens = 0

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        """Count the usage the model reported (every choice of an n-sampled call)."""
        for generations in response.generations:
            for generation in generations:
                if not isinstance(generation, ChatGeneration):
                    continue
                usage = getattr(generation.message, "usage_metadata", None) or {}
                with self._lock:
                    self.input_tokens += int(usage.get("input_tokens", 0))
                    self.output_tokens += int(usage.get("output_tokens", 0))


_COUNTER: ContextVar[TokenCounter | None] = ContextVar("tablerag_token_counter", default=None)
register_configure_hook(_COUNTER, inheritable=True)


@contextmanager
def counting_tokens() -> Iterator[TokenCounter]:
    """Count the tokens of every chat model call made inside the block."""
    counter = TokenCounter()
    token = _COUNTER.set(counter)
    try:
        yield counter
    finally:
        _COUNTER.reset(token)


def summarize(update: dict[str, Any]) -> dict[str, Any]:
    """A short view of a node's update for the trace (long values are cut)."""
    out: dict[str, Any] = {}
    for key, value in update.items():
        if key in _SKIPPED:
            continue
        if key == "attempts" and value:
            last = value[-1]
            out[key] = {k: last.get(k) for k in ("solver", "answer", "error", "tried")}
            out[key]["steps"] = [_step(step) for step in last.get("trace") or []]
            continue
        text = repr(value)
        out[key] = value if len(text) <= _SUMMARY_CHARS else text[: _SUMMARY_CHARS - 1] + "…"
    return out


def _step(step: dict[str, Any]) -> dict[str, Any]:
    """A solver step for the trace: what it ran and what came back (cut)."""
    observation = str(step.get("observation", ""))
    return {
        "action": step.get("action"),
        "code": step.get("code", ""),
        "ok": step.get("ok"),
        "observation": observation[:_SUMMARY_CHARS],
    }


def traced(name: str, node: Node) -> Node:
    """Wrap ``node`` so its update carries a trace record of the call."""

    def run(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        started = time.perf_counter()
        with counting_tokens() as usage:
            update = node(state, runtime)
        record = {
            "node": name,
            "seconds": round(time.perf_counter() - started, 3),
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "produced": summarize(update),
        }
        trace = list(update.get("trace") or [])
        return {**update, "trace": [*trace, record]}

    run.__name__ = name
    run.__doc__ = node.__doc__
    return run
