"""The thread registry: which threads exist and their tables, next to the checkpoints.

The checkpointer keeps each thread's conversation; the registry records a
thread from the moment it is created (before its first message), the client
that owns it and the tables it answers over, in the same database, so all
survive a restart. :class:`SqliteThreadStore` keeps it in the SQLite file of
one server; ``store_postgres.PostgresThreadStore`` in a PostgreSQL database
that several replicas share.
"""

from __future__ import annotations

import abc
import json
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiosqlite

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tablerag_threads (
    thread_id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    tables TEXT NOT NULL,
    owner TEXT
)
"""
_INDEX = """
CREATE INDEX IF NOT EXISTS tablerag_threads_by_owner
ON tablerag_threads (owner, created_at DESC, thread_id DESC)
"""


@dataclass
class ThreadInfo:
    """A thread: id, creation time (Unix seconds), tables (ids; empty: search), owner.

    ``owner`` is None for threads created before threads had owners (any client).
    """

    thread_id: str
    created_at: float
    tables: list[str] = field(default_factory=list)
    owner: str | None = None

    @classmethod
    def from_row(cls, row: Any) -> ThreadInfo:
        """A registry row ``(thread_id, created_at, tables as JSON, owner)``."""
        return cls(str(row[0]), float(row[1]), list(json.loads(row[2])), row[3])


def new_thread(tables: list[str], owner: str) -> ThreadInfo:
    """A new thread of ``owner`` with a fresh random id."""
    return ThreadInfo(str(uuid.uuid4()), time.time(), list(tables), owner)


class ThreadStore(abc.ABC):
    """Create, look up, list and delete threads (the registry beside the checkpoints)."""

    @abc.abstractmethod
    async def create(self, tables: list[str], owner: str) -> ThreadInfo:
        """Register a new thread of ``owner`` with a fresh random id."""

    @abc.abstractmethod
    async def get(self, thread_id: str, owner: str) -> ThreadInfo | None:
        """The thread, or None if no such thread was created or it is another client's."""

    @abc.abstractmethod
    async def set_tables(self, thread_id: str, tables: list[str]) -> None:
        """Make ``tables`` the thread's tables for its next messages."""

    @abc.abstractmethod
    async def page(
        self, owner: str, limit: int, after: tuple[float, str] | None = None
    ) -> list[ThreadInfo]:
        """Up to ``limit`` threads ``owner`` may use, newest first.

        Args:
            owner: The client.
            limit: Most threads returned.
            after: ``(created_at, thread_id)`` of the last thread of the
                previous page: only older threads (None: from the newest).
        """

    @abc.abstractmethod
    async def delete(self, thread_id: str) -> bool:
        """Forget the thread (not its checkpoints); False if it was not registered."""

    @abc.abstractmethod
    async def ping(self) -> None:
        """Raise if the database does not answer."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Close the connection."""


class SqliteThreadStore(ThreadStore):
    """The registry in a SQLite file (one connection, async)."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    @classmethod
    async def open(cls, path: str | Path) -> SqliteThreadStore:
        """Open (and create if needed) the registry in the SQLite file at ``path``."""
        conn = await aiosqlite.connect(str(path), timeout=30)
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute(_SCHEMA)
        async with conn.execute("PRAGMA table_info(tablerag_threads)") as cursor:
            columns = {str(row[1]) for row in await cursor.fetchall()}
        if "owner" not in columns:  # a registry from before threads had owners
            await conn.execute("ALTER TABLE tablerag_threads ADD COLUMN owner TEXT")
        await conn.execute(_INDEX)
        await conn.commit()
        return cls(conn)

    async def create(self, tables: list[str], owner: str) -> ThreadInfo:
        """Register a new thread of ``owner`` with a fresh random id."""
        info = new_thread(tables, owner)
        await self._conn.execute(
            "INSERT INTO tablerag_threads (thread_id, created_at, tables, owner) "
            "VALUES (?, ?, ?, ?)",
            (info.thread_id, info.created_at, json.dumps(info.tables), owner),
        )
        await self._conn.commit()
        return info

    async def get(self, thread_id: str, owner: str) -> ThreadInfo | None:
        """The thread, or None if no such thread was created or it is another client's."""
        async with self._conn.execute(
            "SELECT thread_id, created_at, tables, owner FROM tablerag_threads WHERE thread_id = ?",
            (thread_id,),
        ) as cursor:
            row = await cursor.fetchone()
        if row is None or row[3] not in (None, owner):
            return None
        return ThreadInfo.from_row(row)

    async def set_tables(self, thread_id: str, tables: list[str]) -> None:
        """Make ``tables`` the thread's tables for its next messages."""
        await self._conn.execute(
            "UPDATE tablerag_threads SET tables = ? WHERE thread_id = ?",
            (json.dumps(tables), thread_id),
        )
        await self._conn.commit()

    async def page(
        self, owner: str, limit: int, after: tuple[float, str] | None = None
    ) -> list[ThreadInfo]:
        """Up to ``limit`` threads ``owner`` may use, newest first (older than ``after``)."""
        query = "SELECT thread_id, created_at, tables, owner FROM tablerag_threads "
        query += "WHERE (owner = ? OR owner IS NULL) "
        params: tuple[Any, ...] = (owner,)
        if after is not None:
            query += "AND (created_at, thread_id) < (?, ?) "
            params += after
        query += "ORDER BY created_at DESC, thread_id DESC LIMIT ?"
        async with self._conn.execute(query, (*params, limit)) as cursor:
            rows = await cursor.fetchall()
        return [ThreadInfo.from_row(row) for row in rows]

    async def delete(self, thread_id: str) -> bool:
        """Forget the thread (not its checkpoints); False if it was not registered."""
        cursor = await self._conn.execute(
            "DELETE FROM tablerag_threads WHERE thread_id = ?", (thread_id,)
        )
        await self._conn.commit()
        return cursor.rowcount > 0

    async def ping(self) -> None:
        """Raise if the database does not answer."""
        async with self._conn.execute("SELECT 1") as cursor:
            await cursor.fetchone()

    async def close(self) -> None:
        """Close the connection."""
        await self._conn.close()
