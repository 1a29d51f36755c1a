"""Where the server keeps threads: a SQLite file (one server) or PostgreSQL (replicas).

:func:`open_database` gives the checkpointer, the thread registry and the
thread locks of one database. With SQLite, one process owns the file and its
own per-thread locks suffice. With a ``postgresql://`` URL, every replica of
the server opens the same database: conversations and their owners live there,
and a turn takes a PostgreSQL advisory lock on its thread, so two turns of one
conversation never run at once, whichever replicas they land on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol
from urllib.parse import urlsplit

from langgraph.checkpoint.base import BaseCheckpointSaver

from tablerag_agents.server.store import SqliteThreadStore, ThreadStore

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class ThreadLocks(Protocol):
    """Locks on threads shared by every replica using the database."""

    def hold(self, thread_id: str) -> AbstractAsyncContextManager[None]:
        """Hold the thread's lock (waiting for it) until the block ends."""
        ...

    def try_hold(self, thread_id: str) -> AbstractAsyncContextManager[bool]:
        """Hold the thread's lock if it is free; the block receives whether it is held."""
        ...


class ProcessThreadLocks:
    """No lock beyond the process's own: one server owns a SQLite file."""

    @asynccontextmanager
    async def hold(self, thread_id: str) -> AsyncIterator[None]:
        """Nothing to wait for: the run registry already serialises the thread's runs."""
        yield

    @asynccontextmanager
    async def try_hold(self, thread_id: str) -> AsyncIterator[bool]:
        """Always free (the run registry knows the process's own runs)."""
        yield True


@dataclass
class Database:
    """The checkpointer, thread registry and thread locks of one database.

    Attributes:
        kind: ``"sqlite"`` or ``"postgres"``.
        checkpointer: The conversations' checkpoints.
        threads: The thread registry (ids, owners, tables).
        locks: Cross-replica locks on threads.
    """

    kind: Literal["sqlite", "postgres"]
    checkpointer: BaseCheckpointSaver[str]
    threads: ThreadStore
    locks: ThreadLocks


def is_postgres_url(db: str | Path) -> bool:
    """True for a ``postgresql://`` (or ``postgres://``) connection URL."""
    return isinstance(db, str) and db.startswith(POSTGRES_SCHEMES)


def describe_db(db: str | Path) -> str:
    """The database for messages and logs: a file path, or a URL without its password."""
    if not is_postgres_url(db):
        return str(db)
    try:
        parts = urlsplit(str(db))
        host = parts.hostname or "localhost"
        port = f":{parts.port}" if parts.port else ""
        user = f"{parts.username}@" if parts.username else ""
    except ValueError:
        return "postgresql://(unparsable URL)"
    return f"postgresql://{user}{host}{port}{parts.path}"


@asynccontextmanager
async def open_database(db: str | Path, *, max_runs: int) -> AsyncIterator[Database]:
    """Open the database at ``db`` (a SQLite file, created if missing, or a PostgreSQL URL).

    Args:
        db: SQLite file path, or ``postgresql://user:password@host:port/dbname``.
        max_runs: Runs the server allows at once (each holds a thread lock
            connection on PostgreSQL).

    Raises:
        DatabaseError: PostgreSQL cannot be reached, or its driver is not
            installed (the ``postgres`` extra).
    """
    if is_postgres_url(db):
        from tablerag_agents.server.postgres import open_postgres

        async with open_postgres(str(db), lock_connections=max_runs + 1) as database:
            yield database
        return
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    path = Path(db)
    path.parent.mkdir(parents=True, exist_ok=True)
    async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
        threads = await SqliteThreadStore.open(path)
        try:
            yield Database("sqlite", saver, threads, ProcessThreadLocks())
        finally:
            await threads.close()
