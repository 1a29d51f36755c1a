"""Length-prefixed message framing between the host and the sandboxed worker.

A frame is an 8-byte header (big-endian ``uint32`` JSON length, ``uint32`` blob
length), a UTF-8 JSON object, then an opaque binary blob (Arrow IPC bytes).
Nothing is ever pickled. This module is stdlib-only because it also runs inside
the sandbox, where the ``tablerag_agents`` package is not importable.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

HEADER = struct.Struct(">II")
MAX_JSON_BYTES = 16 * 1024 * 1024


class ProtocolError(Exception):
    """A frame was malformed, too large, or the peer closed the channel."""


def encode_frame(message: dict[str, Any], blob: bytes = b"") -> bytes:
    """Serialise one message and its blob into a frame."""
    body = json.dumps(message, separators=(",", ":")).encode("utf-8")
    if len(body) > MAX_JSON_BYTES:
        raise ProtocolError(f"message of {len(body)} bytes exceeds {MAX_JSON_BYTES}")
    return HEADER.pack(len(body), len(blob)) + body + blob


def parse_header(header: bytes, max_blob: int) -> tuple[int, int]:
    """Return ``(json_len, blob_len)`` after checking both against the caps."""
    json_len, blob_len = HEADER.unpack(header)
    if json_len > MAX_JSON_BYTES or blob_len > max_blob:
        raise ProtocolError(f"frame too large: json={json_len} blob={blob_len} (cap {max_blob})")
    return json_len, blob_len


def decode_message(body: bytes) -> dict[str, Any]:
    """Parse the JSON part of a frame into a dict."""
    try:
        message = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ProtocolError(f"undecodable message: {exc}") from exc
    if not isinstance(message, dict) or not isinstance(message.get("op"), str):
        raise ProtocolError("message is not an object with an 'op'")
    return message


def read_exact(fd: int, n: int) -> bytearray:
    """Read exactly ``n`` bytes from a blocking fd into one buffer (no read-ahead)."""
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        count = os.readv(fd, [view[got : got + min(n - got, 1 << 20)]])
        if not count:
            raise ProtocolError("channel closed")
        got += count
    return buf


def read_frame(fd: int, max_blob: int) -> tuple[dict[str, Any], bytes | bytearray]:
    """Read one frame from a blocking fd."""
    json_len, blob_len = parse_header(bytes(read_exact(fd, HEADER.size)), max_blob)
    message = decode_message(bytes(read_exact(fd, json_len)))
    return message, read_exact(fd, blob_len) if blob_len else b""


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to a blocking fd."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_frame(fd: int, message: dict[str, Any], blob: bytes = b"") -> None:
    """Write one frame to a blocking fd."""
    write_all(fd, encode_frame(message, blob))
