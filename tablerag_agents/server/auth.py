"""Optional bearer-token authentication for every request."""

from __future__ import annotations

import hmac

from starlette.types import ASGIApp, Receive, Scope, Send

from tablerag_agents.server.errors import error_response


class BearerTokenMiddleware:
    """Answer 401 to any HTTP request without ``Authorization: Bearer <token>``.

    The comparison is constant-time. Runs before the body is read, so an
    unauthenticated upload costs the server nothing.

    Args:
        app: The application to protect.
        token: The shared secret (non-empty).
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise ValueError("the bearer token must not be empty")
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass authorised requests (and non-HTTP scopes such as lifespan) through."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = b""
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                given = value
                break
        scheme, _, credentials = given.partition(b" ")
        valid = hmac.compare_digest(credentials.strip(), self._token)
        if scheme.lower() == b"bearer" and valid:
            await self.app(scope, receive, send)
            return
        message = "missing bearer token" if not given else "invalid bearer token"
        response = error_response(
            401,
            f"{message}: send the header 'Authorization: Bearer <token>'",
            headers={"WWW-Authenticate": "Bearer"},
        )
        await response(scope, receive, send)
