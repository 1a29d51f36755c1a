"""What the routes share: resources, graphs, the thread registry, uploads and runs."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request

from tablerag_agents.graphs import Context, TableRAGGraph
from tablerag_agents.resources import Resources
from tablerag_agents.server.errors import ApiError
from tablerag_agents.server.runs import RunRegistry
from tablerag_agents.server.store import ThreadStore
from tablerag_agents.server.uploads import UploadStore

MAX_TABLES_PER_MESSAGE = 20


@dataclass
class ServerState:
    """The service's shared objects (one per app; the graphs are set at start-up).

    Attributes:
        resources: Models, sandbox and registered tables.
        context: Graph settings of every run (solver, index...).
        uploads: Uploaded and registered tables.
        stateless_graph: The graph without a checkpointer (OpenAI endpoint).
        graph: The graph with the SQLite checkpointer (threads).
        threads: The thread registry.
        runs: Running graph runs.
    """

    resources: Resources
    context: Context
    uploads: UploadStore
    stateless_graph: TableRAGGraph
    graph: TableRAGGraph | None = None
    threads: ThreadStore | None = None
    runs: RunRegistry = field(default_factory=RunRegistry)

    def thread_graph(self) -> tuple[TableRAGGraph, ThreadStore]:
        """The checkpointed graph and the thread registry (503 before start-up)."""
        if self.graph is None or self.threads is None:
            raise ApiError(503, "the service is starting; retry in a moment", "starting")
        return self.graph, self.threads

    async def check_tables(self, refs: list[str]) -> list[str]:
        """Refuse table references that are not registered ids or ids of the index.

        File paths are never accepted from clients: a table must be uploaded
        (``POST /tables``), loaded with ``--tables`` or be part of ``--index``.

        Raises:
            ApiError: 422 naming the unknown ids.
        """
        if len(refs) > MAX_TABLES_PER_MESSAGE:
            raise ApiError(422, f"at most {MAX_TABLES_PER_MESSAGE} tables per message")
        known = set(self.resources.table_ids)
        unknown = [ref for ref in refs if ref not in known]
        index_dir = self.context.index_dir
        if unknown and index_dir is not None:
            corpus = await asyncio.to_thread(self.resources.corpus, index_dir)
            unknown = [ref for ref in unknown if ref not in corpus]
        if unknown:
            listed = ", ".join(sorted(known)[:10]) or "none; upload one with POST /tables"
            raise ApiError(
                422, f"unknown table id(s) {unknown}; registered: {listed}", "unknown_table"
            )
        return refs

    def check_answerable(self, refs: list[str]) -> None:
        """Refuse a question when there is nothing to answer it over.

        Raises:
            ApiError: 422 when no table is named or registered and no index is set.
        """
        if not refs and not self.resources.table_ids and self.context.index_dir is None:
            raise ApiError(
                422,
                "no tables to answer over: upload one with POST /tables, "
                "or start the service with --tables or --index",
                "no_tables",
            )


def server_state(request: Request) -> ServerState:
    """The app's :class:`ServerState` (a FastAPI dependency)."""
    state: ServerState = request.app.state.server
    return state


StateDep = Annotated[ServerState, Depends(server_state)]
"""A route parameter receiving the app's :class:`ServerState`."""
