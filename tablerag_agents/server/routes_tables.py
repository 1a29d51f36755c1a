"""Table endpoints: upload a table file, list the tables a client may use, read their rows,
delete an upload."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from starlette.datastructures import UploadFile

from tablerag_agents.server.auth import ClientDep
from tablerag_agents.server.errors import ApiError
from tablerag_agents.server.state import ServerState, StateDep
from tablerag_agents.tables import Table
from tablerag_agents.tables.values import format_value

_MULTIPART_SLACK = 64 * 1024
"""Bytes of multipart framing and form fields allowed on top of the file."""

MAX_ROWS_PAGE = 500
"""Most rows one ``GET /tables/{id}/rows`` returns."""
MAX_CELL_CHARS = 2_000
"""Longer cell texts are cut (ending with "…") in ``GET /tables/{id}/rows``."""

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

    @router.get("/tables/{table_id}/rows")
    async def table_rows(
        table_id: str,
        state: StateDep,
        client: ClientDep,
        offset: Annotated[int, Query(ge=0)] = 0,
        limit: Annotated[int, Query(ge=1, le=MAX_ROWS_PAGE)] = 100,
    ) -> dict[str, Any]:
        """Rows ``offset`` to ``offset + limit`` of a table the client may use, as text.

        ``rows`` are lists of cell texts in the order of ``columns``; a row's
        number is ``offset`` plus its place in the list (the ``row`` of a cited
        cell). Errors: 404 no such table for the client.
        """
        table = await _visible_table(state, table_id, client)
        return await asyncio.to_thread(_rows_page, table, offset, limit)

    @router.delete("/tables/{table_id}", status_code=204)
    async def delete_table(table_id: str, state: StateDep, client: ClientDep) -> None:
        """Delete one of the client's uploads (it frees the upload quota).

        Errors: 404 no such table of the client's, 403 a table the server
        registered. Threads naming it get a 422 on their next message.
        """
        await state.sync_uploads(force=True)
        await asyncio.to_thread(state.uploads.delete, table_id, client)

    return router


async def _visible_table(state: ServerState, table_id: str, client: str) -> Table:
    """A table ``client`` may read: a registered one it may use, or one of the index.

    Raises:
        ApiError: 404 for any other id (another client's upload included).
    """
    await state.sync_uploads()
    if table_id in state.uploads.visible(client):
        return await asyncio.to_thread(state.resources.get_table, table_id)
    if state.index_dir is not None:
        table = await asyncio.to_thread(state.resources.corpus_table, table_id, state.index_dir)
        if table is not None:
            return table
    raise ApiError(404, f"no table {table_id!r}; see GET /tables", "unknown_table")


def _rows_page(table: Table, offset: int, limit: int) -> dict[str, Any]:
    """The JSON of one page of ``table``'s rows."""
    frame = table.df.iloc[offset : offset + limit]
    rows = [
        [format_value(v, MAX_CELL_CHARS, int_floats=True) for v in row]
        for row in frame.itertuples(index=False, name=None)
    ]
    return {
        "id": table.id,
        "caption": table.caption,
        "columns": [str(c) for c in table.df.columns],
        "total": table.n_rows,
        "offset": offset,
        "rows": rows,
    }
