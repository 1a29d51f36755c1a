"""The FastAPI application factory of ``tablerag serve``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI

from tablerag_agents.bounded import default_pool
from tablerag_agents.graphs import Context, build_graph
from tablerag_agents.resources import Resources
from tablerag_agents.server.auth import BearerTokenMiddleware
from tablerag_agents.server.database import is_postgres_url, open_database
from tablerag_agents.server.errors import install_error_handlers
from tablerag_agents.server.routes_health import health_router
from tablerag_agents.server.routes_openai import openai_router
from tablerag_agents.server.routes_tables import tables_router
from tablerag_agents.server.routes_threads import threads_router
from tablerag_agents.server.routes_web import open_paths, static_files, web_router
from tablerag_agents.server.runs import DEFAULT_MAX_RUNS, RunRegistry
from tablerag_agents.server.state import ServerState
from tablerag_agents.server.uploads import (
    DEFAULT_MAX_UPLOAD_TOTAL_BYTES,
    DEFAULT_MAX_UPLOADS,
    UploadStore,
)

logger = logging.getLogger(__name__)

DEFAULT_MAX_UPLOAD_BYTES = 20 * 1024 * 1024
MAX_JSON_BYTES = 4 * 1024 * 1024
SHUTDOWN_GRACE_S = 30.0
"""Seconds running runs get to finish (and be checkpointed) when the service stops."""


def create_app(
    resources: Resources,
    *,
    db_path: str | Path,
    token: str | Sequence[str] | None = None,
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES,
    max_uploads: int = DEFAULT_MAX_UPLOADS,
    max_upload_total_bytes: int = DEFAULT_MAX_UPLOAD_TOTAL_BYTES,
    index_dir: str | Path | None = None,
    upload_dir: str | Path | None = None,
    context: Context | None = None,
    max_runs: int = DEFAULT_MAX_RUNS,
) -> FastAPI:
    """Build the chatbot backend over the TableRAG graph.

    Args:
        resources: Models, sandbox and registered tables (the caller closes them).
        db_path: Where threads and their checkpoints are kept: a SQLite file
            (created if missing), or a ``postgresql://`` URL, which several
            replicas of the server may share (the ``postgres`` extra).
        token: When set, every request needs ``Authorization: Bearer <token>``;
            several tokens are several clients, each with its own uploads and
            threads (see :mod:`tablerag_agents.server.auth`).
        max_upload_bytes: Largest table file ``POST /tables`` accepts.
        max_uploads: Most uploaded tables the server keeps (then 507).
        max_upload_total_bytes: Most bytes of uploaded files it keeps (then 507).
        index_dir: A saved corpus index to answer over (questions without tables).
        upload_dir: Where uploaded tables are kept (default: ``uploads/`` next to
            a SQLite ``db_path``, else in the cache directory); they are
            registered again at start-up.
        context: Graph settings of every run (default: :class:`Context` defaults).
        max_runs: Runs going at once (past that, new messages get a 503 with
            ``Retry-After``).

    Returns:
        The app; serve it with uvicorn (``tablerag serve`` does).
    """
    db: str | Path = str(db_path) if is_postgres_url(str(db_path)) else Path(db_path)
    if upload_dir is not None:
        uploads_path = Path(upload_dir)
    elif isinstance(db, Path):
        uploads_path = db.parent / "uploads"
    else:
        uploads_path = Path(resources.settings.cache_dir) / "server" / "uploads"
    index = str(index_dir) if index_dir is not None else None
    quotas = {"max_uploads": max_uploads, "max_total_bytes": max_upload_total_bytes}
    if isinstance(db, Path):
        uploads = UploadStore(uploads_path, resources, max_upload_bytes, **quotas)
    else:
        from tablerag_agents.server.uploads_postgres import SharedUploadStore

        uploads = SharedUploadStore(db, uploads_path, resources, max_upload_bytes, **quotas)
    state = ServerState(
        resources=resources,
        context=context or Context(),
        index_dir=index,
        uploads=uploads,
        stateless_graph=build_graph(resources, index_dir=index),
        runs=RunRegistry(max_runs),
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # A warm bounded worker now, so the first upload or SQL query does not pay its start.
        default_pool().prewarm()
        if index is not None:  # load now: a bad index fails the start, not a request
            await asyncio.to_thread(resources.corpus, index)
        async with open_database(db, max_runs=max_runs) as database:
            restored = await asyncio.to_thread(state.uploads.restore)
            if restored:
                logger.info("registered %d uploaded tables again", restored)
            state.database = database
            state.runs.thread_locks = database.locks
            state.graph = build_graph(
                resources, index_dir=index, checkpointer=database.checkpointer
            )
            try:
                yield
            finally:
                await state.runs.drain(SHUTDOWN_GRACE_S)
                state.graph = state.database = None
                await asyncio.to_thread(state.uploads.close)

    app = FastAPI(
        title="tablerag-agents",
        summary="Table question answering: OpenAI-compatible chat, threads, table uploads.",
        lifespan=lifespan,
    )
    app.state.server = state
    install_error_handlers(app, max_upload_bytes=max_upload_bytes, max_json_bytes=MAX_JSON_BYTES)
    app.include_router(health_router())
    app.include_router(openai_router(MAX_JSON_BYTES))
    app.include_router(threads_router(MAX_JSON_BYTES))
    app.include_router(tables_router(max_upload_bytes))
    page_files = static_files()
    app.include_router(web_router(page_files))
    if token:  # the page holds no client data: it asks for the token and sends it
        public = ["/health", *open_paths(page_files)]
        app.add_middleware(BearerTokenMiddleware, tokens=token, open_paths=public)
    return app
