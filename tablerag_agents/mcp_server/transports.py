"""Run an MCP server over stdio, or over Streamable HTTP on the loopback interface."""

from __future__ import annotations

import contextlib
import os
import socket
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from io import TextIOWrapper
from typing import IO, Any

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

#: The interface the HTTP transport listens on: this machine only.
LOOPBACK = "127.0.0.1"
#: The MCP endpoint's path.
ENDPOINT = "/mcp"
#: Largest JSON-RPC request body accepted over HTTP (tool arguments are small).
MAX_REQUEST_BYTES = 1024 * 1024
#: Host and Origin headers accepted over HTTP: loopback names only, so a web page
#: cannot reach the server through DNS rebinding.
LOOPBACK_ONLY = TransportSecuritySettings(
    enable_dns_rebinding_protection=True,
    allowed_hosts=[f"{LOOPBACK}:*", "localhost:*"],
    allowed_origins=[f"http://{LOOPBACK}:*", "http://localhost:*"],
)


async def run_stdio(server: Server[Any, Any]) -> None:
    """Serve one client on stdin/stdout until it closes stdin."""
    with protocol_stdout() as out:
        stream = anyio.wrap_file(TextIOWrapper(out, encoding="utf-8"))
        async with stdio_server(stdout=stream) as (read, write):
            await server.run(read, write, server.create_initialization_options())


@contextlib.contextmanager
def protocol_stdout() -> Iterator[IO[bytes]]:
    """Keep file descriptor 1 for the protocol; send anything else written there to stderr.

    A stray ``print`` or a library writing to stdout (a model runtime, a
    subprocess) would corrupt the JSON-RPC stream: during the block, fd 1 and
    ``sys.stdout`` point at stderr, and the protocol writes to a copy of the
    original stdout.
    """
    sys.stdout.flush()
    saved_fd, saved_stdout = os.dup(1), sys.stdout
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        yield out
    finally:
        sys.stdout.flush()
        out.close()
        os.dup2(saved_fd, 1)
        os.close(saved_fd)
        sys.stdout = saved_stdout


def http_app(server: Server[Any, Any]) -> Starlette:
    """The Streamable HTTP app: the MCP endpoint at ``/mcp``, loopback Host/Origin only."""
    manager = StreamableHTTPSessionManager(
        app=server, security_settings=LOOPBACK_ONLY, max_request_body_size=MAX_REQUEST_BYTES
    )

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    return Starlette(routes=[Route(ENDPOINT, endpoint=_Endpoint(manager))], lifespan=lifespan)


class _Endpoint:
    """The session manager as an ASGI app (Starlette treats a plain function as a view)."""

    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        self.manager = manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.manager.handle_request(scope, receive, send)


async def run_http(
    server: Server[Any, Any], port: int, announce: Callable[[str], None] = lambda _: None
) -> None:
    """Serve over Streamable HTTP on ``127.0.0.1:port`` (0: a free port) until interrupted.

    ``announce`` receives the endpoint's URL once the port is bound and listening.
    """
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((LOOPBACK, port))
    except OSError as exc:
        sock.close()
        raise ValueError(f"cannot listen on {LOOPBACK}:{port}: {exc.strerror}") from None
    with sock:
        # Listen before announcing: a client that connects while uvicorn starts waits in
        # the backlog instead of being refused.
        sock.listen(128)
        config = uvicorn.Config(http_app(server), log_level="warning", lifespan="on")
        announce(f"http://{LOOPBACK}:{sock.getsockname()[1]}{ENDPOINT}")
        await uvicorn.Server(config).serve(sockets=[sock])
