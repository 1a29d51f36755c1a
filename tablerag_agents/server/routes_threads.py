"""Thread endpoints: create, list and delete threads, send messages (streamed or not).

Threads live in the server's database (SQLite, or PostgreSQL shared by
replicas): any replica serves any turn of a conversation.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from tablerag_agents.graphs import InputState
from tablerag_agents.server.auth import ClientDep
from tablerag_agents.server.errors import ApiError
from tablerag_agents.server.runs import GraphRun, message_dict, reply_of
from tablerag_agents.server.schemas import MessageIn, ThreadCreate
from tablerag_agents.server.sse import encode_event, sse_response
from tablerag_agents.server.state import ServerState, StateDep
from tablerag_agents.server.store import ThreadInfo, ThreadStore

MAX_PAGE = 100
"""Most threads one ``GET /threads`` returns."""


async def _thread(
    state: ServerState, thread_id: str, client: str
) -> tuple[ThreadInfo, dict[str, Any]]:
    """The thread's registry entry and values (404 if it does not exist or is not the client's)."""
    graph, db = state.thread_graph()
    info = await db.threads.get(thread_id, client)
    if info is None:
        raise _no_thread(thread_id)
    snapshot = await graph.aget_state({"configurable": {"thread_id": thread_id}})
    return info, dict(snapshot.values or {})


def _no_thread(thread_id: str) -> ApiError:
    return ApiError(404, f"no thread {thread_id!r}; create one with POST /threads", "no_thread")


def _summary(info: ThreadInfo) -> dict[str, Any]:
    return {"thread_id": info.thread_id, "created_at": info.created_at, "tables": info.tables}


def _thread_json(info: ThreadInfo, values: dict[str, Any]) -> dict[str, Any]:
    return {
        **_summary(info),
        "table_ids": list(values.get("table_ids") or []),
        "message_count": len(values.get("messages") or []),
    }


def encode_cursor(info: ThreadInfo) -> str:
    """The opaque cursor of the page after ``info`` (its creation time and id)."""
    raw = json.dumps([info.created_at, info.thread_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[float, str]:
    """``(created_at, thread_id)`` from :func:`encode_cursor`'s cursor.

    Raises:
        ApiError: 400 for a cursor this server did not make.
    """
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        created_at, thread_id = json.loads(raw)
        if isinstance(created_at, int | float) and isinstance(thread_id, str):
            return float(created_at), thread_id
    except (binascii.Error, ValueError, TypeError):
        pass
    raise ApiError(
        400, "malformed cursor: pass the next_cursor of the previous page as it is", "bad_cursor"
    )


def _still_there(
    threads: ThreadStore, thread_id: str, client: str
) -> Callable[[], Awaitable[None]]:
    """A run's precondition: the thread was not deleted while the run waited for it."""

    async def check() -> None:
        if await threads.get(thread_id, client) is None:
            raise _no_thread(thread_id)

    return check


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
        _, db = state.thread_graph()
        tables = await state.check_tables(body.tables if body else [], client)
        return _thread_json(await db.threads.create(tables, client), {})

    @router.get("/threads")
    async def list_threads(
        state: StateDep,
        client: ClientDep,
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 20,
        cursor: Annotated[str | None, Query(max_length=512)] = None,
    ) -> dict[str, Any]:
        """The client's threads, newest first, ``limit`` per page.

        Pass the answer's ``next_cursor`` as ``cursor`` for the next page;
        ``next_cursor`` is null on the last page.
        """
        _, db = state.thread_graph()
        after = decode_cursor(cursor) if cursor is not None else None
        found = await db.threads.page(client, limit + 1, after)
        shown = found[:limit]
        more = len(found) > limit
        return {
            "threads": [_summary(info) for info in shown],
            "next_cursor": encode_cursor(shown[-1]) if more else None,
        }

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

    @router.delete("/threads/{thread_id}", status_code=204)
    async def delete_thread(thread_id: str, state: StateDep, client: ClientDep) -> None:
        """Delete one of the client's threads with its checkpoints (the whole conversation).

        Errors: 404 no such thread of the client's, 403 a thread from before
        threads had owners, 409 a message is being answered on it.
        """
        _, db = state.thread_graph()
        info = await db.threads.get(thread_id, client)
        if info is None:
            raise _no_thread(thread_id)
        if info.owner != client:
            raise ApiError(
                403,
                f"thread {thread_id!r} has no owner (it predates owners): it cannot be deleted",
                "forbidden",
            )
        async with state.runs.exclusive(thread_id) as held:
            if not held:
                raise ApiError(
                    409,
                    f"a message is being answered on thread {thread_id!r}; delete it after",
                    "thread_busy",
                    headers={"Retry-After": "2"},
                )
            await db.threads.delete(thread_id)
            await db.checkpointer.adelete_thread(thread_id)

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
        graph, db = state.thread_graph()
        info = await db.threads.get(thread_id, client)
        if info is None:
            raise _no_thread(thread_id)
        # The thread's tables are checked again on every message (one may have been deleted).
        tables = await state.check_tables(
            info.tables if body.tables is None else body.tables, client
        )
        state.check_answerable(tables, client)
        # Always sent: the checkpointed input keeps the last value, the registry is the truth.
        inputs: InputState = {"question": body.content, "tables": tables}
        context = state.run_context(client)
        check = _still_there(db.threads, thread_id, client)
        run = GraphRun(graph, inputs, context=context, thread_id=thread_id, precondition=check)
        state.runs.start(run)  # 503 when the server is full: nothing changed yet
        if body.tables is not None:
            await db.threads.set_tables(thread_id, tables)
        if stream:
            return sse_response(_stream(run, thread_id))
        values = await run.result()
        return {"thread_id": thread_id, "message": reply_of(values)}

    return router
