"""Server-sent events: encoding and a streaming response with keep-alive comments."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import StreamingResponse

KEEPALIVE_S = 15.0
"""Seconds of silence after which a comment line keeps proxies from closing the stream."""


def encode_event(data: Any, event: str | None = None) -> str:
    """One SSE event: an optional ``event:`` line and the data as one JSON ``data:`` line."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n"


async def with_keepalive(
    events: AsyncIterator[str], interval_s: float = KEEPALIVE_S
) -> AsyncIterator[str]:
    """Yield ``events``, and a ``: keep-alive`` comment whenever none came for ``interval_s``."""
    iterator = aiter(events)
    pending: asyncio.Task[str] | None = None
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(anext(iterator))
            done, _ = await asyncio.wait({pending}, timeout=interval_s)
            if not done:
                yield ": keep-alive\n\n"
                continue
            try:
                item = pending.result()
            except StopAsyncIteration:
                return
            pending = None
            yield item
    finally:
        if pending is not None:
            pending.cancel()


def sse_response(events: AsyncIterator[str]) -> StreamingResponse:
    """A ``text/event-stream`` response that is not buffered by proxies."""
    return StreamingResponse(
        with_keepalive(events),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
