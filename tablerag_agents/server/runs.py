"""Graph runs in background tasks: their events go to a queue, their results to the thread.

A run does not belong to the HTTP request that started it: when a streaming
client disconnects, the run still finishes and its answer is checkpointed, so
nothing is lost. Runs on one thread take turns (a per-thread lock), and the
graph's sync nodes run in the event loop's thread pool, so the server keeps
answering while they work. At most ``max_runs`` runs go at once: past that a
new one is refused with a 503 and ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.types import StreamMode

from tablerag_agents.errors import (
    ModelError,
    SandboxError,
    SandboxUnavailableError,
    TableLoadError,
    TableRAGError,
)
from tablerag_agents.graphs import Context, GraphAnswer, InputState, TableRAGGraph
from tablerag_agents.graphs.result import node_record
from tablerag_agents.server.database import ProcessThreadLocks, ThreadLocks
from tablerag_agents.server.errors import ApiError

logger = logging.getLogger(__name__)

STREAM_MODES: list[StreamMode] = ["updates", "messages", "custom", "values"]


@dataclass
class RunEvent:
    """One event of a run: ``updates``, ``token``, ``progress``, ``answer`` or ``error``."""

    event: str
    data: dict[str, Any]


def message_text(message: BaseMessage) -> str:
    """A message's text content."""
    return message.content if isinstance(message.content, str) else message.text


def message_dict(message: BaseMessage) -> dict[str, Any]:
    """A conversation message as JSON: id, role, content (and the answer for replies)."""
    role = {"human": "user", "ai": "assistant"}.get(message.type, message.type)
    out: dict[str, Any] = {"id": message.id, "role": role, "content": message_text(message)}
    if isinstance(message, AIMessage):
        answer = GraphAnswer.from_message(message)
        out["answer"] = answer.record() if answer is not None else None
    return out


def reply_of(values: dict[str, Any]) -> dict[str, Any]:
    """The run's reply (the last AI message) as :func:`message_dict`."""
    for message in reversed(values.get("messages") or []):
        if isinstance(message, AIMessage):
            return message_dict(message)
        if isinstance(message, HumanMessage):
            break
    raise ApiError(500, "the run ended without a reply", "no_reply")


def events_of(mode: str, chunk: Any) -> list[RunEvent]:
    """Client events for one ``(mode, chunk)`` of ``graph.astream``."""
    if mode == "updates":
        out = []
        for node, update in chunk.items():
            out.append(RunEvent("updates", {**node_record(update), "node": node}))
        return out
    if mode == "messages":
        message, meta = chunk
        if not isinstance(message, AIMessage | AIMessageChunk):
            return []  # the question echoed back as the turn starts
        text = message_text(message)
        node = meta.get("langgraph_node", "")
        data = {"node": node, "content": text, "message_id": message.id}
        return [RunEvent("token", data)] if text else []
    if mode == "custom":
        return [RunEvent("progress", chunk if isinstance(chunk, dict) else {"value": chunk})]
    return []


def api_error_of(exc: BaseException) -> ApiError:
    """The HTTP error for an exception raised by a run."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, TableLoadError | ValueError):
        return ApiError(422, str(exc), "bad_input")
    if isinstance(exc, ModelError):
        return ApiError(502, f"the chat model failed: {exc}", "model_error")
    if isinstance(exc, SandboxUnavailableError | SandboxError):
        return ApiError(503, f"the sandbox failed: {exc}", "sandbox_error")
    if isinstance(exc, TableRAGError):
        return ApiError(500, str(exc), "run_failed")
    logger.error("run failed", exc_info=exc)
    return ApiError(500, f"the run failed ({type(exc).__name__}); see the server log", "run_failed")


class GraphRun:
    """One run of the graph whose events can be read while it goes.

    Args:
        graph: The compiled graph.
        inputs: Its input (``question``/``messages`` and ``tables``).
        context: Run settings.
        thread_id: The conversation (None: a stateless run).
        precondition: Awaited once the run holds its thread, before the graph
            starts; it raises (an :class:`ApiError`) to refuse the run, e.g.
            when the thread was deleted while the run waited.
    """

    def __init__(
        self,
        graph: TableRAGGraph,
        inputs: InputState,
        *,
        context: Context,
        thread_id: str | None = None,
        precondition: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.graph = graph
        self.precondition = precondition
        self.inputs = inputs
        self.context = context
        self.thread_id = thread_id
        self.values: dict[str, Any] = {}
        self.error: ApiError | None = None
        self.task: asyncio.Task[None] | None = None
        self._queue: asyncio.Queue[RunEvent | None] = asyncio.Queue()

    async def drive(self) -> None:
        """Run the graph to the end, queueing its events and then the answer (or the error)."""
        config: RunnableConfig = {}
        if self.thread_id is not None:
            config = {"configurable": {"thread_id": self.thread_id}}
        mode: str
        chunk: Any
        try:
            if self.precondition is not None:
                await self.precondition()
            async for mode, chunk in self.graph.astream(
                self.inputs, config, context=self.context, stream_mode=STREAM_MODES
            ):
                if mode == "values":
                    self.values = chunk
                    continue
                for event in events_of(mode, chunk):
                    self._queue.put_nowait(event)
            reply = reply_of(self.values)
            self._queue.put_nowait(RunEvent("answer", {"message": reply}))
        except Exception as exc:
            self.error = api_error_of(exc)
            body = {"message": self.error.message, "status": self.error.status}
            self._queue.put_nowait(RunEvent("error", body))
        finally:
            self._queue.put_nowait(None)

    async def events(self) -> AsyncIterator[RunEvent]:
        """Yield the run's events as they come, ending after ``answer`` or ``error``."""
        while (event := await self._queue.get()) is not None:
            yield event

    async def result(self) -> dict[str, Any]:
        """Wait for the end of the run; its final state values.

        Raises:
            ApiError: The run failed.
        """
        if self.task is None:
            raise RuntimeError("the run was not started")
        await asyncio.shield(self.task)
        if self.error is not None:
            raise self.error
        return self.values


DEFAULT_MAX_RUNS = 32
"""Runs a server allows at once (``tablerag serve --max-runs``); past that, 503."""
RETRY_AFTER_S = 5
"""Seconds a client refused for a full server is told to wait (``Retry-After``)."""


class RunRegistry:
    """The running graph runs: at most ``max_runs``, one at a time per thread.

    Runs of one thread take turns through a lock of this process and the
    database's thread lock (``thread_locks``; set at start-up), so replicas
    sharing a PostgreSQL database never run two turns of a thread at once.
    All runs are awaited at shutdown.

    Args:
        max_runs: Runs (running or waiting for their thread) allowed at once.
    """

    def __init__(self, max_runs: int = DEFAULT_MAX_RUNS) -> None:
        if max_runs < 1:
            raise ValueError(f"max_runs must be at least 1, not {max_runs}")
        self.max_runs = max_runs
        self.thread_locks: ThreadLocks = ProcessThreadLocks()
        self._tasks: set[asyncio.Task[None]] = set()
        self._locks: dict[str, asyncio.Lock] = {}
        self._waiting: dict[str, int] = {}

    @property
    def active(self) -> int:
        """How many runs have not finished."""
        return len(self._tasks)

    def start(self, run: GraphRun) -> GraphRun:
        """Start ``run`` in the background (after the runs queued on its thread).

        Raises:
            ApiError: 503 with ``Retry-After`` when ``max_runs`` runs are going.
        """
        if len(self._tasks) >= self.max_runs:
            raise ApiError(
                503,
                f"the server is busy: {len(self._tasks)} runs are going, its limit "
                f"(max_runs={self.max_runs}); retry in {RETRY_AFTER_S} s",
                "busy",
                headers={"Retry-After": str(RETRY_AFTER_S)},
            )
        task = asyncio.create_task(self._body(run))
        run.task = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return run

    async def _body(self, run: GraphRun) -> None:
        if run.thread_id is None:
            await run.drive()
            return
        async with self._local_turn(run.thread_id), self.thread_locks.hold(run.thread_id):
            await run.drive()

    @asynccontextmanager
    async def _local_turn(self, key: str) -> AsyncIterator[None]:
        """Hold this process's lock of thread ``key`` (after the runs queued before)."""
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._waiting[key] = self._waiting.get(key, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._waiting[key] -= 1
            if not self._waiting[key]:
                del self._waiting[key], self._locks[key]

    @asynccontextmanager
    async def exclusive(self, thread_id: str) -> AsyncIterator[bool]:
        """Hold thread ``thread_id`` if no run is on it here or on another replica.

        The block receives whether it holds the thread; while it does, new
        runs of the thread wait.
        """
        if thread_id in self._waiting:
            yield False
            return
        async with self._local_turn(thread_id), self.thread_locks.try_hold(thread_id) as held:
            yield held

    async def drain(self, timeout_s: float) -> None:
        """Let the running runs finish (up to ``timeout_s``), then cancel the rest."""
        if not self._tasks:
            return
        _, pending = await asyncio.wait(set(self._tasks), timeout=timeout_s)
        for task in pending:
            task.cancel()
        if pending:
            logger.warning("cancelled %d unfinished runs at shutdown", len(pending))
            await asyncio.wait(pending, timeout=5)
