"""Read server-sent events from an httpx streaming response, one at a time."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass
class Event:
    """One SSE event: its name (``message`` when unnamed) and its JSON (or raw) data."""

    name: str
    data: Any


def iter_events(response: httpx.Response) -> Iterator[Event]:
    """Yield events as their blank line arrives (comments such as keep-alives are skipped)."""
    name, data = "message", []
    for line in response.iter_lines():
        if line.startswith(":"):
            continue
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif not line and data:
            text = "\n".join(data)
            try:
                value: Any = json.loads(text)
            except json.JSONDecodeError:
                value = text
            yield Event(name, value)
            name, data = "message", []
