"""Streaming a chat completion as the graph runs: the reply as it is written, progress comments.

The reply's text comes from the ``answer`` node: with ``write_sentence`` on, its
model writes the sentence and each token is sent as it comes; otherwise the
node's reply message (a template sentence) is sent as soon as the node ends.
Node progress goes out as SSE comment lines (``: tablerag {...}``), which
OpenAI SDKs skip, so unchanged clients see a plain completion stream.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from tablerag_agents.server.runs import RunEvent

logger = logging.getLogger(__name__)

ANSWER_NODE = "answer"
"""The graph node that writes the reply."""
PROGRESS_PREFIX = ": tablerag "
"""Start of a progress comment line (JSON follows)."""
_PIECES = re.compile(r"\s*\S+|\s+")
_NODE_FIELDS = ("node", "seconds", "input_tokens", "output_tokens")


def pieces(text: str) -> list[str]:
    """``text`` cut into words (each with the spaces before it); joined, they are ``text``."""
    return _PIECES.findall(text)


def progress_comment(event: RunEvent) -> str | None:
    """An SSE comment for a finished node (``updates``) or a node's step (``progress``)."""
    if event.event == "updates":
        data: dict[str, Any] = {"event": "node"}
        data.update({k: event.data[k] for k in _NODE_FIELDS if k in event.data})
    elif event.event == "progress":
        data = {"event": "step"}
        data.update(
            {
                k: v
                for k, v in event.data.items()
                if v is None or isinstance(v, str | int | float | bool)
            }
        )
    else:
        return None
    # json.dumps escapes line breaks, so the comment stays one line.
    return PROGRESS_PREFIX + json.dumps(data, ensure_ascii=False, default=str) + "\n\n"


class ReplyWriter:
    """The reply text as far as it is known while the ``answer`` node writes it.

    Follows the first message the node streams (its model call, or its reply
    message when no model writes the sentence) and keeps what the node keeps
    of it: the first non-empty line, stripped. Trailing spaces are held back
    until a word follows, so what was sent is always a prefix of the reply.
    """

    def __init__(self) -> None:
        self.sent = ""
        self._raw = ""
        self._message_id: str | None = None
        self._done = False

    def feed(self, data: dict[str, Any]) -> str:
        """The new text a ``token`` event of the answer node adds ("" for none)."""
        if self._done:
            return ""
        message_id = data.get("message_id")
        if self._message_id is None:
            self._message_id = message_id
        elif message_id != self._message_id:
            return ""  # another message of the node (its reply after its model's tokens)
        self._raw += str(data.get("content") or "")
        line, newline, _ = self._raw.lstrip().partition("\n")
        self._done = bool(newline)
        return self._advance(line.strip() if newline else line.rstrip())

    def _advance(self, known: str) -> str:
        if not known.startswith(self.sent):
            return ""
        new = known[len(self.sent) :]
        self.sent = known
        return new

    def rest(self, reply: str) -> str:
        """What is left to send once the run's ``reply`` text is known."""
        if reply.startswith(self.sent):
            return reply[len(self.sent) :]
        logger.warning("the streamed reply %r is not a prefix of the reply %r", self.sent, reply)
        return ""
