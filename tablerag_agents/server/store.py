"""The thread registry: which threads exist and their tables, next to the checkpoints.

The checkpointer keeps each thread's conversation; this small table records a
thread from the moment it is created (before its first message), the client
that owns it and the tables it answers over, in the same SQLite file, so all
survive a restart.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import aiosqlite

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tablerag_threads (
    thread_id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    tables TEXT NOT NULL,
    owner TEXT
)
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


class ThreadStore:
    """Create and look up threads in a SQLite file (one connection, async)."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    @classmethod
    async def open(cls, path: str | Path) -> ThreadStore:
        """Open (and create if needed) the registry in the SQLite file at ``path``."""
        conn = await aiosqlite.connect(str(path), timeout=30)
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute(_SCHEMA)
        async with conn.execute("PRAGMA table_info(tablerag_threads)") as cursor:
            columns = {str(row[1]) for row in await cursor.fetchall()}
        if "owner" not in columns:  # a registry from before threads had owners
            await conn.execute("ALTER TABLE tablerag_threads ADD COLUMN owner TEXT")
        await conn.commit()
        return cls(conn)

    async def create(self, tables: list[str], owner: str) -> ThreadInfo:
        """Register a new thread of ``owner`` with a fresh random id."""
        info = ThreadInfo(str(uuid.uuid4()), time.time(), list(tables), owner)
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
        return ThreadInfo(str(row[0]), float(row[1]), list(json.loads(row[2])), row[3])

    async def set_tables(self, thread_id: str, tables: list[str]) -> None:
        """Make ``tables`` the thread's tables for its next messages."""
        await self._conn.execute(
            "UPDATE tablerag_threads SET tables = ? WHERE thread_id = ?",
            (json.dumps(tables), thread_id),
        )
        await self._conn.commit()

    async def close(self) -> None:
        """Close the connection."""
        await self._conn.close()
