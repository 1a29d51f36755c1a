"""Thread endpoints: create a thread, send a message (optionally streamed), read the history."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response

from tablerag_agents.graphs import InputState
from tablerag_agents.server.auth import ClientDep
from tablerag_agents.server.errors import ApiError
from tablerag_agents.server.runs import GraphRun, message_dict, reply_of
from tablerag_agents.server.schemas import MessageIn, ThreadCreate
from tablerag_agents.server.sse import encode_event, sse_response
from tablerag_agents.server.state import ServerState, StateDep
from tablerag_agents.server.store import ThreadInfo


async def _thread(
    state: ServerState, thread_id: str, client: str
) -> tuple[ThreadInfo, dict[str, Any]]:
    """The thread's registry entry and values (404 if it does not exist or is not the client's)."""
    graph, threads = state.thread_graph()
    info = await threads.get(thread_id, client)
    if info is None:
        raise ApiError(404, f"no thread {thread_id!r}; create one with POST /threads", "no_thread")
    snapshot = await graph.aget_state({"configurable": {"thread_id": thread_id}})
    return info, dict(snapshot.values or {})


def _thread_json(info: ThreadInfo, values: dict[str, Any]) -> dict[str, Any]:
    return {
        "thread_id": info.thread_id,
        "created_at": info.created_at,
        "tables": info.tables,
        "table_ids": list(values.get("table_ids") or []),
        "message_count": len(values.get("messages") or []),
    }


async def _stream(run: GraphRun, thread_id: str) -> AsyncIterator[str]:
    """The run's SSE events: ``metadata`` first, ``answer`` or ``error`` last."""
    yield encode_event({"thread_id": thread_id, "run_id": str(uuid.uuid4())}, "metadata")
    async for event in run.events():
        data = {**event.data, "thread_id": thread_id} if event.event == "answer" else event.data
        yield encode_event(data, event.event)


def threads_router(max_json_bytes: int) -> APIRouter:
    """The ``/threads`` routes (JSON bodies limited to ``max_json_bytes``)."""
    router = APIRouter(tags=["threads"], max_body_size=max_json_bytes)

    @router.post("/threads", status_code=201)
    async def create_thread(
        state: StateDep, client: ClientDep, body: ThreadCreate | None = None
    ) -> dict[str, Any]:
        """Create a conversation of the client; its checkpoints survive a restart."""
        _, threads = state.thread_graph()
        tables = await state.check_tables(body.tables if body else [], client)
        return _thread_json(await threads.create(tables, client), {})

    @router.get("/threads/{thread_id}")
    async def get_thread(thread_id: str, state: StateDep, client: ClientDep) -> dict[str, Any]:
        """A thread's tables and size."""
        info, values = await _thread(state, thread_id, client)
        return _thread_json(info, values)

    @router.get("/threads/{thread_id}/messages")
    async def get_messages(thread_id: str, state: StateDep, client: ClientDep) -> dict[str, Any]:
        """A thread's messages, oldest first; replies carry the answer with cited cells."""
        _, values = await _thread(state, thread_id, client)
        messages = [message_dict(m) for m in values.get("messages") or []]
        return {"thread_id": thread_id, "messages": messages}

    @router.post("/threads/{thread_id}/messages", response_model=None)
    async def send_message(
        thread_id: str,
        body: MessageIn,
        state: StateDep,
        client: ClientDep,
        stream: bool = False,
    ) -> dict[str, Any] | Response:
        """Ask a question on a thread; ``?stream=true`` streams the run as server-sent events.

        Events: ``metadata``, then ``updates`` (a node finished: its trace
        record), ``token`` (model output), ``progress`` (a node's step), and
        finally ``answer`` (the reply with its cited cells) or ``error``.
        """
        graph, threads = state.thread_graph()
        info = await threads.get(thread_id, client)
        if info is None:
            raise ApiError(404, f"no thread {thread_id!r}; create one with POST /threads")
        # The thread's tables are checked again on every message (one may have been deleted).
        tables = await state.check_tables(
            info.tables if body.tables is None else body.tables, client
        )
        if body.tables is not None:
            await threads.set_tables(thread_id, tables)
        state.check_answerable(tables, client)
        # Always sent: the checkpointed input keeps the last value, the registry is the truth.
        inputs: InputState = {"question": body.content, "tables": tables}
        context = state.run_context(client)
        run = state.runs.start(GraphRun(graph, inputs, context=context, thread_id=thread_id))
        if stream:
            return sse_response(_stream(run, thread_id))
        values = await run.result()
        return {"thread_id": thread_id, "message": reply_of(values)}

    return router
