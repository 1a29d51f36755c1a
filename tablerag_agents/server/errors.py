"""JSON errors: every 4xx/5xx answers ``{"error": {"message", "type", "code"}}``.

The shape is OpenAI's, so OpenAI SDKs show the message; the thread and table
endpoints use it too, so a client handles one error format.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

logger = logging.getLogger(__name__)

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    409: "conflict_error",
    413: "request_too_large",
    415: "unsupported_media_type",
    422: "invalid_request_error",
    503: "service_unavailable",
    507: "insufficient_storage",
}


class ApiError(Exception):
    """An expected failure that becomes a JSON error response.

    Args:
        status: HTTP status code.
        message: What went wrong and what to do instead (shown to the client).
        code: Optional machine-readable code (e.g. ``"thread_not_found"``).
        headers: Extra response headers (e.g. ``Retry-After``).
    """

    def __init__(
        self,
        status: int,
        message: str,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.headers = headers


def error_body(status: int, message: str, code: str | None = None) -> dict[str, Any]:
    """The JSON body of an error response."""
    kind = _TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "code": code}}


def error_response(
    status: int, message: str, code: str | None = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    """A JSON error response."""
    return JSONResponse(error_body(status, message, code), status_code=status, headers=headers)


def _validation_message(exc: RequestValidationError) -> tuple[int, str]:
    """Status and one readable line for a request that failed validation."""
    errors = list(exc.errors())
    if any(e.get("type") == "json_invalid" for e in errors):
        detail = (errors[0].get("ctx") or {}).get("error", "")
        return 400, f"malformed JSON body: {detail}".rstrip(": ")
    parts = []
    for err in errors[:5]:
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        if not where and err.get("type") in ("model_attributes_type", "dict_type"):
            msg = "the body must be a JSON object (Content-Type: application/json)"
        parts.append(f"{where}: {msg}" if where else msg)
    return 422, "; ".join(parts) or "invalid request"


def install_error_handlers(app: FastAPI, *, max_upload_bytes: int, max_json_bytes: int) -> None:
    """Make every error a JSON body in :func:`error_body`'s shape."""

    async def api_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        return error_response(exc.status, exc.message, exc.code, exc.headers)

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        message = str(exc.detail)
        if exc.status_code == 413:
            message = (
                f"request body too large: uploads may have {max_upload_bytes} bytes, "
                f"JSON requests {max_json_bytes}"
            )
        elif exc.status_code == 404 and message == "Not Found":
            message = f"no such endpoint: {request.method} {request.url.path}"
        elif exc.status_code == 405:
            message = f"method {request.method} not allowed on {request.url.path}"
        return error_response(exc.status_code, message, headers=dict(exc.headers or {}))

    async def validation_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        status, message = _validation_message(exc)
        return error_response(status, message)

    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("unhandled error on %s %s", request.method, request.url.path)
        return error_response(500, f"internal error ({type(exc).__name__}); see the server log")

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(Exception, unexpected)
