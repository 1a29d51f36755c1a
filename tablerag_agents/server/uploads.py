"""Uploaded tables: stored under generated names, owned, loaded, registered, restored at start."""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, BinaryIO

from tablerag_agents.errors import TableLoadError
from tablerag_agents.resources import Resources
from tablerag_agents.server.errors import ApiError
from tablerag_agents.tables import Table, load_table, load_tables
from tablerag_agents.tables.loaders import FORMATS

logger = logging.getLogger(__name__)

_SLUG = re.compile(r"[^a-z0-9]+")
_CHUNK = 1 << 16

DEFAULT_MAX_UPLOADS = 1000
"""Uploads a server keeps at most (``tablerag serve --max-uploads``)."""
DEFAULT_MAX_UPLOAD_TOTAL_BYTES = 512 * 1024 * 1024
"""Bytes of uploaded files a server keeps at most (loaded tables live in memory)."""


def _client_name(filename: str) -> str:
    """The last component of a client's file name, whatever its path syntax."""
    return PureWindowsPath(PurePosixPath(filename or "").name).name


def _hide_paths(message: str, path: Path, name: str) -> str:
    """``message`` with the stored file's server path replaced by the client's file name."""
    for server_path in {str(path.resolve()), str(path)}:
        message = message.replace(server_path, name)
    for folder in {str(path.parent.resolve()), str(path.parent)}:
        message = message.replace(folder, "<uploads>")
    return message


def table_summary(table: Table, source: str) -> dict[str, Any]:
    """A table as the API lists it (never a server path)."""
    return {
        "id": table.id,
        "caption": table.caption,
        "rows": table.n_rows,
        "columns": [str(c) for c in table.df.columns],
        "source": source,
    }


@dataclass(frozen=True)
class Upload:
    """An uploaded table: its owner (None: every client), files and size.

    ``manifest`` is None when the record lives in a database, not in a file.
    """

    table_id: str
    owner: str | None
    file: Path
    manifest: Path | None
    bytes: int


class UploadStore:
    """Keep uploaded table files in one folder and register them in the resources.

    Each upload is ``tables/<random hex><suffix>`` plus its manifest
    ``manifests/<random hex>.json`` (two folders, so a ``.json`` table and its
    manifest never share a name); the client's file name only gives the suffix
    and the caption. Each upload belongs to the client that sent it: other
    clients neither see nor use it. Tables registered otherwise (``--tables``)
    are every client's. Manifests written next to the files by earlier
    versions (which had no owners) are still read, as every client's tables.
    The server holds at most ``max_uploads`` uploads of ``max_total_bytes``
    together: past that, uploads are refused (507).

    Args:
        directory: Where uploads are kept.
        resources: Where the loaded tables are registered.
        max_bytes: Largest accepted file.
        max_uploads: Most uploads kept at once.
        max_total_bytes: Most bytes of uploaded files kept at once.
    """

    def __init__(
        self,
        directory: Path,
        resources: Resources,
        max_bytes: int,
        *,
        max_uploads: int = DEFAULT_MAX_UPLOADS,
        max_total_bytes: int = DEFAULT_MAX_UPLOAD_TOTAL_BYTES,
    ) -> None:
        self.directory = directory
        self.resources = resources
        self.max_bytes = max_bytes
        self.max_uploads = max_uploads
        self.max_total_bytes = max_total_bytes
        self._sources: dict[str, str] = {}
        self._uploads: dict[str, Upload] = {}
        self._pending = 0
        self._lock = threading.Lock()

    @property
    def files_dir(self) -> Path:
        """The folder of the uploaded files."""
        return self.directory / "tables"

    @property
    def manifests_dir(self) -> Path:
        """The folder of the uploads' manifests."""
        return self.directory / "manifests"

    def _used(self) -> int:
        """Bytes of the uploaded files kept (call under the lock)."""
        return sum(u.bytes for u in self._uploads.values())

    @staticmethod
    def suffix_of(filename: str) -> str:
        """The file's lower-case suffix if the loaders read it.

        Raises:
            ApiError: 415 for a suffix no loader reads.
        """
        suffix = PurePosixPath(_client_name(filename)).suffix.lower()
        if suffix not in FORMATS:
            raise ApiError(
                415,
                f"unsupported table file {_client_name(filename)!r}: "
                f"use one of {', '.join(sorted(FORMATS))}",
                "unsupported_file",
            )
        return suffix

    def save(
        self, filename: str, data: BinaryIO, owner: str, caption: str | None = None
    ) -> dict[str, Any]:
        """Store, load and register ``owner``'s uploaded table (blocking: run it in a thread).

        Raises:
            ApiError: 415 unsupported suffix, 413 too large, 507 the server's
                upload quota is full, 422 unreadable table.
        """
        suffix = self.suffix_of(filename)
        name = _client_name(filename)
        stem = PurePosixPath(name).stem
        with self._lock:
            self._check_count()
            self._pending += 1
            room = self.max_total_bytes - self._used()
        try:
            return self._store(name, stem, suffix, data, caption, room, owner)
        finally:
            with self._lock:
                self._pending -= 1

    def _store(
        self,
        name: str,
        stem: str,
        suffix: str,
        data: BinaryIO,
        caption: str | None,
        room: int,
        owner: str,
    ) -> dict[str, Any]:
        key = uuid.uuid4().hex
        path = self.files_dir / f"{key}{suffix}"
        manifest_path = self.manifests_dir / f"{key}.json"
        try:
            size = self._copy(data, path, room)
            table = load_table(path, id=self._new_id(stem), caption=caption or stem, quiet=True)
            manifest = {
                "id": table.id,
                "owner": owner,
                "file": path.name,
                "filename": name,
                "caption": table.caption,
                "bytes": size,
                "uploaded_at": time.time(),
            }
            self._keep(table, Upload(table.id, owner, path, manifest_path, size), manifest)
        except TableLoadError as exc:
            path.unlink(missing_ok=True)
            reason = _hide_paths(exc.reason, path, name)
            raise ApiError(422, f"cannot load {name!r}: {reason}", "table_load_error") from None
        except BaseException:
            path.unlink(missing_ok=True)
            manifest_path.unlink(missing_ok=True)
            raise
        return {**table_summary(table, "upload"), "filename": name, "bytes": size}

    def _new_id(self, stem: str) -> str:
        """A fresh table id from the file's stem (never one already registered)."""
        slug = (_SLUG.sub("_", stem.lower()).strip("_") or "table")[:40]
        known = set(self.resources.table_ids)
        while (table_id := f"{slug}-{uuid.uuid4().hex[:6]}") in known:
            pass
        return table_id

    def _keep(self, table: Table, upload: Upload, manifest: dict[str, Any]) -> None:
        """Record a new upload (here: its manifest file) and register its table."""
        assert upload.manifest is not None
        with self._lock:
            self._check_bytes(upload.bytes)
            upload.manifest.write_text(json.dumps(manifest))
            self._add(table, upload)

    def _add(self, table: Table, upload: Upload) -> None:
        """Register an upload's table (call under the lock)."""
        self._uploads[table.id] = upload
        self.resources.add_table(table)
        self._sources[table.id] = "upload"

    def _discard(self, upload: Upload) -> None:
        """Remove a deleted upload's record and file (it is already unregistered)."""
        if upload.manifest is not None:
            upload.manifest.unlink(missing_ok=True)
        upload.file.unlink(missing_ok=True)

    shared = False
    """True when replicas share the uploads (then :meth:`sync` catches up with them)."""

    def sync(self, max_age_s: float = 1.0) -> None:
        """Catch up with uploads other replicas made or deleted (none share this folder)."""

    def close(self) -> None:
        """Release what :meth:`restore` opened (nothing for a folder)."""

    def _check_count(self, held: int | None = None) -> None:
        """Refuse a new upload when the server holds ``max_uploads`` (call under the lock)."""
        if held is None:
            held = len(self._uploads) + self._pending
        if held >= self.max_uploads:
            raise ApiError(
                507,
                f"the server holds {held} uploaded tables, its limit (max_uploads="
                f"{self.max_uploads}): no room for another; delete one of yours with "
                "DELETE /tables/{id}",
                "upload_quota",
            )

    def _check_bytes(self, size: int, used: int | None = None) -> None:
        """Refuse ``size`` more bytes past ``max_total_bytes`` (call under the lock)."""
        if used is None:
            used = self._used()
        if used + size > self.max_total_bytes:
            raise ApiError(
                507,
                f"no room for {size} more bytes: the server's uploads hold {used} of their "
                f"{self.max_total_bytes}-byte limit (max_upload_total_bytes); delete one of "
                "yours with DELETE /tables/{id}",
                "upload_quota",
            )

    def _copy(self, data: BinaryIO, path: Path, room: int) -> int:
        """Copy the upload to ``path``, refusing more than ``max_bytes`` or ``room``."""
        size = 0
        with path.open("xb") as out:
            while chunk := data.read(_CHUNK):
                size += len(chunk)
                if size > self.max_bytes:
                    raise ApiError(
                        413,
                        f"the file is larger than the upload limit of {self.max_bytes} bytes",
                        "too_large",
                    )
                if size > room:
                    with self._lock:
                        self._check_bytes(size)
                out.write(chunk)
        return size

    def _register(self, table: Table, source: str) -> None:
        with self._lock:
            self.resources.add_table(table)
            self._sources[table.id] = source

    def restore(self) -> int:
        """Create the folders; register the tables uploaded before a restart (how many).

        They count against the quota but are kept even when they exceed it.
        """
        self.files_dir.mkdir(parents=True, exist_ok=True)
        self.manifests_dir.mkdir(parents=True, exist_ok=True)
        restored = 0
        for manifest_path, folder in [
            *((m, self.files_dir) for m in sorted(self.manifests_dir.glob("*.json"))),
            *((m, self.directory) for m in sorted(self.directory.glob("*.json"))),  # old layout
        ]:
            try:
                manifest = json.loads(manifest_path.read_text())
                path = folder / PurePosixPath(str(manifest["file"])).name
                if path == manifest_path:  # an old .json upload: its manifest overwrote it
                    raise ValueError("the file was overwritten by its manifest; upload it again")
                table = load_table(
                    path, id=str(manifest["id"]), caption=str(manifest["caption"]), quiet=True
                )
                size = path.stat().st_size
                owner = manifest.get("owner")
                if owner is not None and not isinstance(owner, str):
                    raise ValueError(f"bad owner {owner!r}")
            except (OSError, ValueError, KeyError, TypeError, TableLoadError) as exc:
                logger.warning("skipping upload %s: %s", manifest_path.name, exc)
                continue
            if table.id in self.resources.table_ids:
                logger.warning("skipping upload %s: id %r is taken", manifest_path.name, table.id)
                continue
            if owner is None:
                logger.warning("upload %r has no owner (an older version): every client sees it")
            with self._lock:
                self._uploads[table.id] = Upload(table.id, owner, path, manifest_path, size)
            self._register(table, "upload")
            restored += 1
        return restored

    def register_folder(self, folder: Path) -> int:
        """Load and register every table file under ``folder``; returns how many."""
        count = 0
        for table in load_tables(folder):
            self._register(table, "folder")
            count += 1
        return count

    def visible(self, owner: str) -> list[str]:
        """Ids of the registered tables ``owner`` may use (its uploads and shared tables)."""
        with self._lock:
            uploads = dict(self._uploads)
        return [
            table_id
            for table_id in self.resources.table_ids
            if (upload := uploads.get(table_id)) is None or upload.owner in (None, owner)
        ]

    def listing(self, owner: str) -> list[dict[str, Any]]:
        """The registered tables ``owner`` may use, as the API lists them."""
        out = []
        for table_id in self.visible(owner):
            try:
                table = self.resources.get_table(table_id)
            except TableLoadError:
                continue  # deleted meanwhile
            out.append(table_summary(table, self._sources.get(table_id, "registered")))
        return out

    def delete(self, table_id: str, owner: str) -> None:
        """Delete ``owner``'s upload: unregister it, remove its files (blocking).

        Raises:
            ApiError: 404 for no table ``owner`` may use, 403 for a table
                that is not its own upload.
        """
        if table_id not in self.visible(owner):
            raise ApiError(404, f"no table {table_id!r}", "unknown_table")
        with self._lock:
            upload = self._uploads.get(table_id)
            if upload is None or upload.owner != owner:
                raise ApiError(
                    403, f"table {table_id!r} is not your upload: it cannot be deleted", "forbidden"
                )
            self._remove(table_id)
        self._discard(upload)

    def _remove(self, table_id: str) -> None:
        """Unregister an upload's table (call under the lock)."""
        del self._uploads[table_id]
        self._sources.pop(table_id, None)
        self.resources.remove_table(table_id)
