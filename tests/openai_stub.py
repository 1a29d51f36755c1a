"""A scripted OpenAI-compatible chat server on loopback, for tests of other processes.

Use it where a test drives a separate process (``langgraph dev``, a backend
service) that must talk to a chat model over real HTTP through the real
``ChatOpenAI`` client, but must not need the slow local model. Point the
process at it with ``TABLERAG_CHAT_MODEL=<any name> TABLERAG_BASE_URL=<stub.base_url>``.

Endpoints: ``POST /v1/chat/completions`` (plain JSON, or server-sent events
with ``"stream": true``, the reply cut into word chunks and a final ``usage``
chunk when ``stream_options.include_usage`` is set) and ``GET /v1/models``.
Every response carries ``usage`` (whitespace tokens of the prompt and reply).
``n`` choices are returned (all the same reply), and the reply is cut at the
first of the request's ``stop`` sequences, as a real server does.

Reply rules: the prompt (every message's text, joined by newlines) is searched
with each rule's regular expression in order; the first match gives the reply.
A rule's reply is a string (``str.format``-ed with the match's named groups) or
a callable ``(match, messages) -> str``. The rules given to the constructor
come first, then :data:`DEFAULT_RULES`:

1. a follow-up rewrite prompt (``prompts/rewrite_question.txt``,
   ``Follow-up question: ...``): the follow-up repeated unchanged (the prompt
   allows that when it already stands alone);
2. an SQL solver prompt (``prompts/sql_system.txt``): ```` ```sql SELECT COUNT(*) FROM t``` ````;
3. a read-the-answer-off-the-result prompt (``prompts/answer_from_result.txt``):
   the last line of the result;
4. an answer-sentence prompt (``prompts/answer_sentence.txt``): ``The answer is <answer>.``;
5. anything else: ``I do not know.``

Every request body is kept in :attr:`OpenAIStub.requests` for assertions.

Example:
    >>> with OpenAIStub([(r"Question: how many", "```sql\\nSELECT 3\\n```")]) as stub:
    ...     env = {"TABLERAG_CHAT_MODEL": "scripted", "TABLERAG_BASE_URL": stub.base_url}
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = str | Callable[[re.Match[str], list[dict[str, Any]]], str]
Rule = tuple[str, Reply]

DEFAULT_RULES: tuple[Rule, ...] = (
    (r"Follow-up question: (?P<question>[^\n]+)", "{question}"),
    (r"You write one DuckDB SQL query", "```sql\nSELECT COUNT(*) FROM t\n```"),
    (
        r"Result:\n(?:[^\n]*\n)*?(?P<last>[^\n]+)\nGive only the short answer",
        "{last}",
    ),
    (r"Answer: (?P<answer>[^\n]+)\nWrite one short sentence", "The answer is {answer}."),
    (r"", "I do not know."),
)


def message_text(message: dict[str, Any]) -> str:
    """The text of an OpenAI chat message (string or list-of-parts content)."""
    content = message.get("content") or ""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def count_tokens(text: str) -> int:
    """Whitespace tokens: the stub's usage counts."""
    return len(text.split())


class OpenAIStub:
    """A scripted OpenAI-compatible chat completions server on ``host`` (a free port).

    Args:
        rules: ``(regex, reply)`` pairs tried before :data:`DEFAULT_RULES`.
        host: Interface to listen on (loopback by default).
        port: Port (0: a free one).
        chunk_delay: Seconds between streamed chunks.
    """

    def __init__(
        self,
        rules: Sequence[Rule] = (),
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        chunk_delay: float = 0.0,
    ) -> None:
        """Compile the rules; the server starts with :meth:`start` or ``with``."""
        self.rules = [(re.compile(p), r) for p, r in [*rules, *DEFAULT_RULES]]
        self.chunk_delay = chunk_delay
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (``http://host:port/v1``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> OpenAIStub:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="openai-stub", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def reply_for(self, messages: list[dict[str, Any]]) -> str:
        """The scripted reply for a conversation (the first matching rule)."""
        prompt = "\n".join(message_text(m) for m in messages)
        for pattern, reply in self.rules:
            match = pattern.search(prompt)
            if match is None:
                continue
            if callable(reply):
                return reply(match, messages)
            return reply.format(**match.groupdict())
        raise AssertionError("no rule matched")  # the last default rule matches anything

    def prompts(self) -> list[str]:
        """Every request's prompt text, in order (for assertions)."""
        with self._lock:
            bodies = list(self.requests)
        return ["\n".join(message_text(m) for m in b.get("messages", [])) for b in bodies]

    # -- HTTP ---------------------------------------------------------------------------

    def _completion(self, body: dict[str, Any]) -> tuple[str, dict[str, int]]:
        messages = body.get("messages") or []
        reply = self.reply_for(messages)
        stop = body.get("stop") or []
        for s in [stop] if isinstance(stop, str) else stop:
            if s and s in reply:
                reply = reply[: reply.index(s)]
        prompt_tokens = sum(count_tokens(message_text(m)) for m in messages)
        out = count_tokens(reply)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": out,
            "total_tokens": prompt_tokens + out,
        }
        return reply, usage

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # quiet

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/") == "/v1/models":
                    self._json(200, {"object": "list", "data": [{"id": "scripted"}]})
                else:
                    self._json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:  # noqa: N802
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                try:
                    length = int(self.headers.get("Content-Length") or 0)
                    body = json.loads(self.rfile.read(length) or b"{}")
                except (ValueError, json.JSONDecodeError) as exc:
                    self._json(400, {"error": {"message": f"bad JSON: {exc}"}})
                    return
                with stub._lock:
                    stub.requests.append(body)
                reply, usage = stub._completion(body)
                n = int(body.get("n") or 1)
                model = body.get("model", "scripted")
                ident = f"chatcmpl-{uuid.uuid4().hex[:12]}"
                if body.get("stream"):
                    self._stream(ident, model, reply, usage, n, body)
                    return
                choices = [
                    {
                        "index": i,
                        "message": {"role": "assistant", "content": reply},
                        "finish_reason": "stop",
                        "logprobs": None,
                    }
                    for i in range(n)
                ]
                self._json(
                    200,
                    {
                        "id": ident,
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": model,
                        "choices": choices,
                        "usage": usage,
                    },
                )

            def _stream(
                self,
                ident: str,
                model: str,
                reply: str,
                usage: dict[str, int],
                n: int,
                body: dict[str, Any],
            ) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True

                def send(choices: list[dict[str, Any]], **extra: Any) -> None:
                    chunk = {
                        "id": ident,
                        "object": "chat.completion.chunk",
                        "created": int(time.time()),
                        "model": model,
                        "choices": choices,
                        **extra,
                    }
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()

                pieces = re.findall(r"\S+\s*|\s+", reply) or [""]
                for i in range(n):
                    send([{"index": i, "delta": {"role": "assistant", "content": ""}}])
                    for piece in pieces:
                        send([{"index": i, "delta": {"content": piece}, "finish_reason": None}])
                        if stub.chunk_delay:
                            time.sleep(stub.chunk_delay)
                    send([{"index": i, "delta": {}, "finish_reason": "stop"}])
                if (body.get("stream_options") or {}).get("include_usage"):
                    send([], usage=usage)
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        return Handler
