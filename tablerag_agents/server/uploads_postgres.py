"""Uploads shared by replicas: each upload's record and file bytes in PostgreSQL.

With ``--db postgresql://...`` an upload made on one replica can be used on
every replica: its owner, caption, size and file bytes go into the table
``tablerag_uploads`` (created with the thread registry by ``postgres.py``). Each replica keeps
copies of the files in a folder of its own and catches up with the table
(:meth:`SharedUploadStore.sync`) before it reads the uploads: at most once a
second, and at once when a message names an id it does not know. The quotas
(``max_uploads``, ``max_total_bytes``) count the uploads of every replica.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tablerag_agents.errors import TableLoadError
from tablerag_agents.resources import Resources
from tablerag_agents.server.errors import ApiError
from tablerag_agents.server.postgres import CONNECT_TIMEOUT_S, lock_key
from tablerag_agents.server.uploads import (
    DEFAULT_MAX_UPLOAD_TOTAL_BYTES,
    DEFAULT_MAX_UPLOADS,
    Upload,
    UploadStore,
)
from tablerag_agents.tables import Table, load_table
from tablerag_agents.tables.loaders import FORMATS

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

logger = logging.getLogger(__name__)

_QUOTA_KEY = lock_key("uploads-quota")


class SharedUploadStore(UploadStore):
    """An :class:`UploadStore` whose uploads live in PostgreSQL, for every replica.

    Args:
        url: The server's ``postgresql://`` database (the schema is set up
            with the thread registry, before :meth:`restore`).
        directory: Where this replica keeps its copies of the files (in a
            subfolder of its own, removed by :meth:`close`).
        resources: Where the loaded tables are registered.
        max_bytes: Largest accepted file.
        max_uploads: Most uploads kept at once, over all replicas.
        max_total_bytes: Most bytes of uploaded files kept at once, over all replicas.
    """

    shared = True

    def __init__(
        self,
        url: str,
        directory: Path,
        resources: Resources,
        max_bytes: int,
        *,
        max_uploads: int = DEFAULT_MAX_UPLOADS,
        max_total_bytes: int = DEFAULT_MAX_UPLOAD_TOTAL_BYTES,
    ) -> None:
        super().__init__(
            directory / f"replica-{uuid.uuid4().hex[:12]}",
            resources,
            max_bytes,
            max_uploads=max_uploads,
            max_total_bytes=max_total_bytes,
        )
        self._url = url
        self._pool: ConnectionPool[Any] | None = None
        # Held while the uploads known here change, so a sync never takes an upload
        # being saved or deleted here for another replica's.
        self._sync_lock = threading.Lock()
        self._synced_at = float("-inf")
        self._unreadable: set[str] = set()

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[Any]]:
        if self._pool is None:
            raise ApiError(503, "the service is starting; retry in a moment", "starting")
        with self._pool.connection() as conn:
            yield conn

    def restore(self) -> int:
        """Connect, and load every replica's uploads (how many)."""
        from psycopg_pool import ConnectionPool

        self.files_dir.mkdir(parents=True, exist_ok=True)
        self._pool = ConnectionPool(
            self._url,
            min_size=1,
            max_size=4,
            open=False,
            name="tablerag-uploads",
            kwargs={"prepare_threshold": None},
        )
        self._pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
        self.sync(max_age_s=0.0)
        with self._lock:
            return len(self._uploads)

    def close(self) -> None:
        """Close the connections and delete this replica's copies of the files."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        shutil.rmtree(self.directory, ignore_errors=True)

    def _keep(self, table: Table, upload: Upload, manifest: dict[str, Any]) -> None:
        """Insert the upload into the shared table (within the shared quotas), then register it."""
        from psycopg.errors import UniqueViolation

        data = upload.file.read_bytes()
        with self._sync_lock:
            try:
                with self._conn() as conn, conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_QUOTA_KEY,))
                    row = conn.execute(
                        "SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM tablerag_uploads"
                    ).fetchone()
                    count, used = (int(row[0]), int(row[1])) if row else (0, 0)
                    self._check_count(count)
                    self._check_bytes(upload.bytes, used)
                    conn.execute(
                        "INSERT INTO tablerag_uploads (table_id, owner, filename, caption, "
                        "suffix, bytes, uploaded_at, data) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                        (
                            table.id,
                            upload.owner,
                            manifest["filename"],
                            table.caption,
                            upload.file.suffix,
                            upload.bytes,
                            manifest["uploaded_at"],
                            data,
                        ),
                    )
            except UniqueViolation:
                raise ApiError(409, "the new table's id is taken; upload it again") from None
            with self._lock:
                self._add(table, upload)

    def delete(self, table_id: str, owner: str) -> None:
        """Delete ``owner``'s upload on every replica (see :meth:`UploadStore.delete`)."""
        with self._sync_lock:
            super().delete(table_id, owner)

    def _discard(self, upload: Upload) -> None:
        """Delete the upload's row (other replicas drop it at their next sync) and file."""
        with self._conn() as conn:
            conn.execute("DELETE FROM tablerag_uploads WHERE table_id = %s", (upload.table_id,))
        upload.file.unlink(missing_ok=True)

    def sync(self, max_age_s: float = 1.0) -> None:
        """Load the uploads other replicas made and drop those they deleted.

        Args:
            max_age_s: Do nothing if the last sync is younger than this.
        """
        with self._sync_lock:
            if time.monotonic() - self._synced_at < max_age_s:
                return
            with self._conn() as conn:
                rows = conn.execute(
                    "SELECT table_id, owner, caption, suffix, bytes FROM tablerag_uploads"
                ).fetchall()
            self._synced_at = time.monotonic()
            remote = {str(row[0]): row for row in rows}
            with self._lock:
                gone = [self._uploads[i] for i in self._uploads if i not in remote]
                for upload in gone:
                    self._remove(upload.table_id)
            for upload in gone:
                upload.file.unlink(missing_ok=True)
            for table_id, row in remote.items():
                if table_id not in self._uploads and table_id not in self._unreadable:
                    self._fetch(table_id, str(row[1]), str(row[2]), str(row[3]), int(row[4]))

    def _fetch(self, table_id: str, owner: str, caption: str, suffix: str, size: int) -> None:
        """Copy another replica's upload here, load and register it (skip it if unusable)."""
        if suffix not in FORMATS or table_id in self.resources.table_ids:
            logger.warning("skipping shared upload %r: bad suffix or id taken", table_id)
            self._unreadable.add(table_id)
            return
        with self._conn() as conn:
            row = conn.execute(
                "SELECT data FROM tablerag_uploads WHERE table_id = %s", (table_id,)
            ).fetchone()
        if row is None:
            return  # deleted meanwhile
        path = self.files_dir / f"{uuid.uuid4().hex}{suffix}"
        path.write_bytes(row[0])
        try:
            table = load_table(path, id=table_id, caption=caption, quiet=True)
        except TableLoadError as exc:
            logger.warning("skipping shared upload %r: %s", table_id, exc.reason)
            self._unreadable.add(table_id)
            path.unlink(missing_ok=True)
            return
        with self._lock:
            self._add(table, Upload(table_id, owner, path, None, size))
