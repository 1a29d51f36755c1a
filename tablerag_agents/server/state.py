"""What the routes share: resources, graphs, the database, uploads and runs."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Annotated

from fastapi import Depends, Request

from tablerag_agents.graphs import Context, TableRAGGraph
from tablerag_agents.resources import Resources
from tablerag_agents.server.database import Database
from tablerag_agents.server.errors import ApiError
from tablerag_agents.server.runs import RunRegistry
from tablerag_agents.server.uploads import UploadStore

MAX_TABLES_PER_MESSAGE = 20


@dataclass
class ServerState:
    """The service's shared objects (one per app; the graphs are set at start-up).

    Attributes:
        resources: Models, sandbox and registered tables.
        context: Graph settings of every run (solver, filters...).
        index_dir: The corpus index the graphs are built over (None: none).
        uploads: Uploaded and registered tables.
        stateless_graph: The graph without a checkpointer (OpenAI endpoint).
        graph: The graph with the database's checkpointer (threads).
        database: Checkpointer, thread registry and thread locks (SQLite or PostgreSQL).
        runs: Running graph runs.
    """

    resources: Resources
    context: Context
    index_dir: str | None
    uploads: UploadStore
    stateless_graph: TableRAGGraph
    graph: TableRAGGraph | None = None
    database: Database | None = None
    runs: RunRegistry = field(default_factory=RunRegistry)

    def thread_graph(self) -> tuple[TableRAGGraph, Database]:
        """The checkpointed graph and the database (503 before start-up)."""
        if self.graph is None or self.database is None:
            raise ApiError(
                503,
                "the service is starting; retry in a moment",
                "starting",
                headers={"Retry-After": "1"},
            )
        return self.graph, self.database

    async def check_tables(self, refs: list[str], owner: str) -> list[str]:
        """Refuse table references that are not ids ``owner`` may use.

        Those are the registered tables (``--tables``) and ``owner``'s uploads,
        and the ids of the index. File paths are never accepted from clients:
        a table must be uploaded (``POST /tables``), loaded with ``--tables``
        or be part of ``--index``. Another client's upload is an unknown id.

        Raises:
            ApiError: 422 naming the unknown ids.
        """
        if len(refs) > MAX_TABLES_PER_MESSAGE:
            raise ApiError(422, f"at most {MAX_TABLES_PER_MESSAGE} tables per message")
        await self.sync_uploads()
        known = set(self.uploads.visible(owner))
        unknown = [ref for ref in refs if ref not in known]
        if unknown and self.uploads.shared:  # uploaded on another replica a moment ago?
            await self.sync_uploads(force=True)
            known = set(self.uploads.visible(owner))
            unknown = [ref for ref in refs if ref not in known]
        if unknown and self.index_dir is not None:
            corpus = await asyncio.to_thread(self.resources.corpus, self.index_dir)
            unknown = [ref for ref in unknown if ref not in corpus]
        if unknown:
            listed = ", ".join(sorted(known)[:10]) or "none; upload one with POST /tables"
            raise ApiError(
                422, f"unknown table id(s) {unknown}; yours to use: {listed}", "unknown_table"
            )
        return refs

    async def sync_uploads(self, *, force: bool = False) -> None:
        """Catch up with the uploads of other replicas (when replicas share them)."""
        if self.uploads.shared:
            await asyncio.to_thread(self.uploads.sync, 0.0 if force else 1.0)

    def check_answerable(self, refs: list[str], owner: str) -> None:
        """Refuse a question when ``owner`` has nothing to answer it over.

        Raises:
            ApiError: 422 when no table is named or visible and no index is set.
        """
        if not refs and self.index_dir is None and not self.uploads.visible(owner):
            raise ApiError(
                422,
                "no tables to answer over: upload one with POST /tables, "
                "or start the service with --tables or --index",
                "no_tables",
            )

    def run_context(self, owner: str) -> Context:
        """The graph settings of a run for ``owner``: only its tables are in scope."""
        return replace(self.context, table_scope=self.uploads.visible(owner))


def server_state(request: Request) -> ServerState:
    """The app's :class:`ServerState` (a FastAPI dependency)."""
    state: ServerState = request.app.state.server
    return state


StateDep = Annotated[ServerState, Depends(server_state)]
"""A route parameter receiving the app's :class:`ServerState`."""
