"""The web page: ``GET /`` and its script and style files, shipped inside the package.

The page and its files need no token (they hold no client data): the page asks
the user for the token, keeps it in ``sessionStorage`` and sends it as
``Authorization: Bearer <token>`` on every API call, like any other client.
Every response carries a strict Content-Security-Policy: scripts and styles
only from this origin (no inline code), requests only to this origin, images
from this origin or ``data:`` URLs, and the page may not be framed.
"""

from __future__ import annotations

from importlib import resources
from pathlib import PurePosixPath

from fastapi import APIRouter
from fastapi.responses import Response

from tablerag_agents.server.errors import ApiError

STATIC_PREFIX = "/static/"
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}
_MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}


def static_files() -> dict[str, tuple[bytes, str]]:
    """The page's files by name: their bytes and media type (read once from the package)."""
    folder = resources.files("tablerag_agents.server") / "static"
    files = {}
    for entry in folder.iterdir():
        media_type = _MEDIA_TYPES.get(PurePosixPath(entry.name).suffix)
        if entry.is_file() and media_type is not None:
            files[entry.name] = (entry.read_bytes(), media_type)
    if "index.html" not in files:
        raise RuntimeError("the package's web page (server/static/index.html) is missing")
    return files


def open_paths(files: dict[str, tuple[bytes, str]]) -> list[str]:
    """The paths of the page and its files (served to GET without a token)."""
    return ["/"] + [STATIC_PREFIX + name for name in files if name != "index.html"]


def web_router(files: dict[str, tuple[bytes, str]]) -> APIRouter:
    """The routes serving ``files`` (from :func:`static_files`); only those names exist."""
    router = APIRouter(tags=["web page"], include_in_schema=False)

    def _serve(name: str, cache: str) -> Response:
        body, media_type = files[name]
        headers = {**SECURITY_HEADERS, "Cache-Control": cache}
        return Response(body, media_type=media_type, headers=headers)

    @router.get("/")
    async def page() -> Response:
        """The page: tables, threads, a question box, the live run and the cited cells."""
        return _serve("index.html", "no-cache")

    @router.get(STATIC_PREFIX + "{name}")
    async def static(name: str) -> Response:
        """One of the page's files (a fixed set of names: no path is ever opened)."""
        if name == "index.html" or name not in files:
            raise ApiError(404, f"no such file: {STATIC_PREFIX}{name}", "not_found")
        return _serve(name, "no-cache")

    return router
