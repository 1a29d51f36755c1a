"""Small helpers shared by the graph's nodes."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.runtime import Runtime
from tablerag_agents.graphs.context import Context

from tablerag_agents.errors import UnknownTableError
from tablerag_agents.resources import Resources

if TYPE_CHECKING:
    from tablerag_agents.retrieval.corpus import CorpusIndex
    from tablerag_agents.tables import Table


class ResourcesGetter:
    """What the nodes share: the resources (looked up at run time) and the graph's corpus.

    Every table reference of a run resolves here, and only to a registered id
    (within the run's ``table_scope``) or an id of the corpus index the graph
    was built over. Nothing a run sends is opened as a file or a folder.

    Args:
        get: Returns the resources (called at run time, not at import).
        index_dir: The saved corpus index searched when a turn names no table
            (configuration of whoever builds the graph).
    """

    def __init__(self, get: Callable[[], Resources], index_dir: str | Path | None = None) -> None:
        self._get = get
        self.index_dir = str(index_dir) if index_dir is not None else None

    def __call__(self) -> Resources:
        """The resources."""
        return self._get()

    def table_ids(self, ctx: Context) -> list[str]:
        """The registered tables this run may use."""
        ids = self().table_ids
        if ctx.table_scope is None:
            return ids
        scope = set(ctx.table_scope)
        return [t for t in ids if t in scope]

    def table(self, ref: str, ctx: Context) -> Table:
        """The table ``ref`` names: a registered id in scope, or an id of the graph's corpus.

        Raises:
            UnknownTableError: ``ref`` is neither (a file path never is).
        """
        res = self()
        if ctx.table_scope is None or ref in ctx.table_scope:
            with contextlib.suppress(UnknownTableError):
                return res.get_table(ref)
        if self.index_dir is not None:
            table = res.corpus_table(ref, self.index_dir)
            if table is not None:
                return table
        raise UnknownTableError(ref, self.table_ids(ctx))

    def search_corpus(self, ctx: Context) -> CorpusIndex:
        """What a turn without tables searches: the graph's corpus, else the tables in scope."""
        res = self()
        if self.index_dir is not None:
            return res.corpus(self.index_dir)
        return res.registered_corpus(self.table_ids(ctx))


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
