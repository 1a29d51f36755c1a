"""Table endpoints: upload a table file, list the tables a client may use, delete an upload."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from starlette.datastructures import UploadFile

from tablerag_agents.server.auth import ClientDep
from tablerag_agents.server.errors import ApiError
from tablerag_agents.server.state import StateDep

_MULTIPART_SLACK = 64 * 1024
"""Bytes of multipart framing and form fields allowed on top of the file."""

_UPLOAD_SCHEMA = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {"type": "string", "format": "binary"},
                        "caption": {"type": "string"},
                    },
                }
            }
        },
    }
}


def tables_router(max_upload_bytes: int) -> APIRouter:
    """The ``/tables`` routes (uploads limited to ``max_upload_bytes``)."""
    router = APIRouter(tags=["tables"])

    @router.post(
        "/tables",
        status_code=201,
        openapi_extra=_UPLOAD_SCHEMA,
        max_body_size=max_upload_bytes + _MULTIPART_SLACK,
    )
    async def upload_table(request: Request, state: StateDep, client: ClientDep) -> dict[str, Any]:
        """Upload a table file (multipart field ``file``; optional ``caption``).

        The file is stored under a generated name, loaded and registered as
        the client's own table; its id can then be named in its messages.
        Errors: 413 too large, 415 unsupported extension, 422 unreadable table
        (the loader's message), 507 the server's upload quota is full.
        """
        # Parsed here, not by FastAPI, so a too-large body is a 413 and not a 400.
        form = await request.form(max_files=1, max_fields=4)
        try:
            upload = form.get("file")
            if not isinstance(upload, UploadFile):
                raise ApiError(
                    422, "send the table file as the multipart form field 'file'", "no_file"
                )
            caption = form.get("caption")
            filename = upload.filename or ""
            state.uploads.suffix_of(filename)  # 415 before any copying
            return await asyncio.to_thread(
                state.uploads.save,
                filename,
                upload.file,
                client,
                caption if isinstance(caption, str) and caption.strip() else None,
            )
        finally:
            await form.close()

    @router.get("/tables")
    async def list_tables(state: StateDep, client: ClientDep) -> dict[str, Any]:
        """The tables the client may use, and the size of the corpus index when one is served."""
        await state.sync_uploads()
        tables = await asyncio.to_thread(state.uploads.listing, client)
        out: dict[str, Any] = {"tables": tables, "index": None}
        if state.index_dir is not None:
            corpus = await asyncio.to_thread(state.resources.corpus, state.index_dir)
            out["index"] = {"tables": len(corpus)}
        return out

    @router.delete("/tables/{table_id}", status_code=204)
    async def delete_table(table_id: str, state: StateDep, client: ClientDep) -> None:
        """Delete one of the client's uploads (it frees the upload quota).

        Errors: 404 no such table of the client's, 403 a table the server
        registered. Threads naming it get a 422 on their next message.
        """
        await state.sync_uploads(force=True)
        await asyncio.to_thread(state.uploads.delete, table_id, client)

    return router
