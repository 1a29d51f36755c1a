"""Who is asking: bearer tokens on every request, and the client identity that owns data.

Each token is one client. Tables a client uploads and threads it creates are
its own: other clients cannot list, read, use or delete them. A front end that
serves several users with one token can keep them apart with the
``X-Tablerag-Client`` header (any short id it chooses): that id splits the
token's data further, but it is not authentication (whoever holds the token
can send any id), so give mutually untrusted clients their own tokens.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Sequence
from typing import Annotated

from fastapi import Depends, Request
from starlette.types import ASGIApp, Receive, Scope, Send

from tablerag_agents.server.errors import ApiError, error_response

ANONYMOUS = "anonymous"
"""The identity of every request when the server has no token."""
CLIENT_HEADER = "X-Tablerag-Client"
"""Optional header naming the end user of a token (it splits the token's data)."""
_SCOPE_KEY = "tablerag.token_identity"
_CLIENT_ID = re.compile(r"[A-Za-z0-9._@:-]{1,64}")


def token_identity(token: str) -> str:
    """A stable name for a token that does not reveal it (a SHA-256 prefix)."""
    return "token-" + hashlib.sha256(token.encode()).hexdigest()[:16]


class BearerTokenMiddleware:
    """Answer 401 to any HTTP request without ``Authorization: Bearer <token>``.

    The comparison is constant-time (every token is compared). Runs before the
    body is read, so an unauthenticated upload costs the server nothing. The
    matching token's identity is put in the request scope for :func:`client_of`.

    Args:
        app: The application to protect.
        tokens: The accepted tokens (non-empty), one per client.
        open_paths: Paths served without a token to GET (``/health``, for load
            balancers; they must show no client data).
    """

    def __init__(
        self, app: ASGIApp, tokens: str | Sequence[str], open_paths: Sequence[str] = ()
    ) -> None:
        accepted = [tokens] if isinstance(tokens, str) else list(tokens)
        if not accepted or not all(accepted):
            raise ValueError("bearer tokens must not be empty")
        self.app = app
        self._tokens = [(t.encode(), token_identity(t)) for t in accepted]
        self._open_paths = frozenset(open_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass authorised requests (and non-HTTP scopes such as lifespan) through."""
        if scope["type"] != "http" or (
            scope["method"] == "GET" and scope["path"] in self._open_paths
        ):
            await self.app(scope, receive, send)
            return
        given = b""
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                given = value
                break
        scheme, _, credentials = given.partition(b" ")
        identity = None
        for token, name in self._tokens:
            if hmac.compare_digest(credentials.strip(), token):
                identity = name
        if scheme.lower() == b"bearer" and identity is not None:
            scope[_SCOPE_KEY] = identity
            await self.app(scope, receive, send)
            return
        message = "missing bearer token" if not given else "invalid bearer token"
        response = error_response(
            401,
            f"{message}: send the header 'Authorization: Bearer <token>'",
            headers={"WWW-Authenticate": "Bearer"},
        )
        await response(scope, receive, send)


def client_of(request: Request) -> str:
    """The identity that owns what this request creates (a FastAPI dependency).

    Raises:
        ApiError: 400 for a malformed ``X-Tablerag-Client`` header.
    """
    identity = str(request.scope.get(_SCOPE_KEY, ANONYMOUS))
    client = request.headers.get(CLIENT_HEADER)
    if client is None or not client.strip():
        return identity
    if not _CLIENT_ID.fullmatch(client.strip()):
        raise ApiError(
            400,
            f"the {CLIENT_HEADER} header must be 1-64 letters, digits or . _ @ : -",
            "bad_client_id",
        )
    return f"{identity}/{client.strip()}"


ClientDep = Annotated[str, Depends(client_of)]
"""A route parameter receiving the requesting client's identity."""
