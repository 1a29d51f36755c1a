"""Threads, owners and checkpoints in PostgreSQL, shared by every replica of the server.

Needs the ``postgres`` extra (``langgraph-checkpoint-postgres``, ``psycopg``,
``psycopg-pool``). Connection pools: a small one for the checkpointer and the
thread registry (autocommit), and one for thread locks, where each running
turn holds a transaction with ``pg_advisory_xact_lock`` on its thread (so the
lock ends with the transaction, whatever happens to the run). Schema set-up
runs under a session advisory lock, so replicas starting together do not race.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from tablerag_agents.errors import DatabaseError
from tablerag_agents.server.database import Database, describe_db
from tablerag_agents.server.store import ThreadInfo, ThreadStore, new_thread

if TYPE_CHECKING:
    from psycopg_pool import AsyncConnectionPool

CONNECT_TIMEOUT_S = 10
SETUP_WAIT_S = 120
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS tablerag_threads (
        thread_id TEXT PRIMARY KEY,
        created_at DOUBLE PRECISION NOT NULL,
        tables TEXT NOT NULL,
        owner TEXT
    )""",
    """CREATE INDEX IF NOT EXISTS tablerag_threads_by_owner
        ON tablerag_threads (owner, created_at DESC, thread_id DESC)""",
    # uploads_postgres.SharedUploadStore: uploads every replica can use
    """CREATE TABLE IF NOT EXISTS tablerag_uploads (
        table_id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        filename TEXT NOT NULL,
        caption TEXT NOT NULL,
        suffix TEXT NOT NULL,
        bytes BIGINT NOT NULL,
        uploaded_at DOUBLE PRECISION NOT NULL,
        data BYTEA NOT NULL
    )""",
)
_COLUMNS = "thread_id, created_at, tables, owner"


def lock_key(name: str) -> int:
    """A stable signed 64-bit advisory-lock key for ``name``."""
    digest = hashlib.blake2b(f"tablerag:{name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


_SETUP_KEY = lock_key("schema-setup")


class PostgresThreadStore(ThreadStore):
    """The thread registry in a PostgreSQL table (through an autocommit pool)."""

    def __init__(self, pool: AsyncConnectionPool[Any]) -> None:
        self._pool = pool

    async def _rows(self, query: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        from psycopg.rows import tuple_row

        async with self._pool.connection() as conn, conn.cursor(row_factory=tuple_row) as cur:
            await cur.execute(query, params)
            return await cur.fetchall() if cur.description else []

    async def create(self, tables: list[str], owner: str) -> ThreadInfo:
        """Register a new thread of ``owner`` with a fresh random id."""
        info = new_thread(tables, owner)
        await self._rows(
            f"INSERT INTO tablerag_threads ({_COLUMNS}) VALUES (%s, %s, %s, %s)",
            (info.thread_id, info.created_at, json.dumps(info.tables), owner),
        )
        return info

    async def get(self, thread_id: str, owner: str) -> ThreadInfo | None:
        """The thread, or None if no such thread was created or it is another client's."""
        rows = await self._rows(
            f"SELECT {_COLUMNS} FROM tablerag_threads WHERE thread_id = %s", (thread_id,)
        )
        if not rows or rows[0][3] not in (None, owner):
            return None
        return ThreadInfo.from_row(rows[0])

    async def set_tables(self, thread_id: str, tables: list[str]) -> None:
        """Make ``tables`` the thread's tables for its next messages."""
        await self._rows(
            "UPDATE tablerag_threads SET tables = %s WHERE thread_id = %s",
            (json.dumps(tables), thread_id),
        )

    async def page(
        self, owner: str, limit: int, after: tuple[float, str] | None = None
    ) -> list[ThreadInfo]:
        """Up to ``limit`` threads ``owner`` may use, newest first (older than ``after``)."""
        query = f"SELECT {_COLUMNS} FROM tablerag_threads WHERE (owner = %s OR owner IS NULL) "
        params: tuple[Any, ...] = (owner,)
        if after is not None:
            query += "AND (created_at, thread_id) < (%s, %s) "
            params += after
        query += "ORDER BY created_at DESC, thread_id DESC LIMIT %s"
        return [ThreadInfo.from_row(row) for row in await self._rows(query, (*params, limit))]

    async def delete(self, thread_id: str) -> bool:
        """Forget the thread (not its checkpoints); False if it was not registered."""
        rows = await self._rows(
            "DELETE FROM tablerag_threads WHERE thread_id = %s RETURNING thread_id", (thread_id,)
        )
        return bool(rows)

    async def ping(self) -> None:
        """Raise if the database does not answer."""
        await self._rows("SELECT 1", ())

    async def close(self) -> None:
        """Nothing to close: :func:`open_postgres` closes the pool."""


class PostgresThreadLocks:
    """Advisory locks on threads, each held by a transaction of the lock pool."""

    def __init__(self, pool: AsyncConnectionPool[Any]) -> None:
        self._pool = pool

    @asynccontextmanager
    async def hold(self, thread_id: str) -> AsyncIterator[None]:
        """Hold the thread's lock (waiting for another replica's turn) until the block ends."""
        async with self._pool.connection() as conn:  # its transaction ends the lock
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(thread_id),))
            yield

    @asynccontextmanager
    async def try_hold(self, thread_id: str) -> AsyncIterator[bool]:
        """Hold the thread's lock if no replica holds it; the block receives whether it is held."""
        async with self._pool.connection() as conn:
            cur = await conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (lock_key(thread_id),))
            row = await cur.fetchone()
            yield bool(row and row[0])


def _driver() -> None:
    """Raise a clear error when the ``postgres`` extra is not installed."""
    try:
        import langgraph.checkpoint.postgres.aio  # noqa: F401
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        raise DatabaseError(
            f"a PostgreSQL --db needs the postgres extra ({exc.name} is missing): "
            'pip install "tablerag-agents[postgres]"'
        ) from None


async def _setup_lock(conn: Any) -> None:
    """Take the schema set-up lock, polling.

    A blocked ``pg_advisory_lock`` would keep a snapshot open, and the
    checkpointer's ``CREATE INDEX CONCURRENTLY`` in the replica holding the
    lock waits for every older snapshot: the two would wait for each other.

    Raises:
        DatabaseError: Another replica held it for ``SETUP_WAIT_S``.
    """
    deadline = time.monotonic() + SETUP_WAIT_S
    while True:
        cur = await conn.execute("SELECT pg_try_advisory_lock(%s)", (_SETUP_KEY,))
        row = await cur.fetchone()
        if row and row[0]:
            return
        if time.monotonic() > deadline:
            raise DatabaseError(
                f"another replica has been setting the database up for {SETUP_WAIT_S} s"
            )
        await asyncio.sleep(0.1)


async def _setup(url: str, checkpointer: Any) -> None:
    """Create the checkpoint tables and the registry, one replica at a time."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(
        url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
    ) as conn:
        await _setup_lock(conn)
        try:
            await checkpointer.setup()
            for statement in _SCHEMA:
                await conn.execute(statement)
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (_SETUP_KEY,))


def check_postgres(url: str) -> None:
    """Connect once to ``url`` (blocking), so a bad URL fails before the server starts.

    Raises:
        DatabaseError: The driver is missing or the database cannot be reached.
    """
    _driver()
    import psycopg

    try:
        psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S).close()
    except psycopg.Error as exc:
        raise DatabaseError(f"cannot connect to {describe_db(url)}: {exc}".strip()) from None


@asynccontextmanager
async def open_postgres(url: str, *, lock_connections: int) -> AsyncIterator[Database]:
    """The checkpointer, registry and thread locks of the PostgreSQL database at ``url``.

    Args:
        url: ``postgresql://user:password@host:port/dbname``.
        lock_connections: Most connections holding thread locks (one per running turn).

    Raises:
        DatabaseError: The driver is missing or the database cannot be reached.
    """
    _driver()
    import psycopg
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    # Prepared statements off: works behind PgBouncer in transaction mode too.
    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        url,
        min_size=1,
        max_size=4,
        open=False,
        name="tablerag-db",
        kwargs={"autocommit": True, "prepare_threshold": None, "row_factory": dict_row},
    )
    locks: AsyncConnectionPool[Any] = AsyncConnectionPool(
        url,
        min_size=1,
        max_size=lock_connections,
        open=False,
        name="tablerag-thread-locks",
        kwargs={"prepare_threshold": None},
    )
    try:
        await pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
        await locks.open(wait=True, timeout=CONNECT_TIMEOUT_S)
        checkpointer = AsyncPostgresSaver(pool)
        await _setup(url, checkpointer)
    except psycopg.Error as exc:  # psycopg_pool.PoolTimeout included
        await locks.close()
        await pool.close()
        raise DatabaseError(f"cannot open {describe_db(url)}: {exc}") from None
    try:
        threads = PostgresThreadStore(pool)
        yield Database("postgres", checkpointer, threads, PostgresThreadLocks(locks))
    finally:
        await locks.close()
        await pool.close()
