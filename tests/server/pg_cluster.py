"""A throwaway PostgreSQL cluster for tests: initdb in a temp dir, a free loopback port.

Uses Debian's ``postgresql`` binaries (``/usr/lib/postgresql/<version>/bin``, or
the folder in ``TABLERAG_PG_BIN``). PostgreSQL refuses to run as root, so as
root the cluster runs as the ``postgres`` user the package creates. Without the
binaries the tests skip, except in CI (``CI=true``), where they fail.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest


def pg_bin_dir() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl`` (the newest version), or None."""
    if env := os.environ.get("TABLERAG_PG_BIN"):
        return Path(env)
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    return found[-1].parent if found else None


def require_postgres() -> Path:
    """The binaries' folder; skip the test without them (fail in CI)."""
    bin_dir = pg_bin_dir()
    if bin_dir is not None and (bin_dir / "pg_ctl").exists():
        return bin_dir
    message = "PostgreSQL binaries not found (apt-get install postgresql)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{message}: CI must run the PostgreSQL tests")
    pytest.skip(message)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresCluster:
    """A private cluster listening on 127.0.0.1 (and a unix socket in its folder).

    Args:
        bin_dir: Folder of ``initdb``/``pg_ctl``.
    """

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        as_root = os.geteuid() == 0
        # As root, /tmp itself: the postgres user may not enter a root-only TMPDIR.
        self.root = Path(tempfile.mkdtemp(prefix="tablerag-pg-", dir="/tmp" if as_root else None))
        self.data = self.root / "data"
        self.port = _free_port()
        self.user = "tablerag"
        self._run_as: dict[str, Any] = {}
        if as_root:  # postgres will not run as root
            account = pwd.getpwnam("postgres")
            os.chown(self.root, account.pw_uid, account.pw_gid)
            self._run_as = {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}

    def _run(self, *args: str) -> None:
        subprocess.run(
            args, check=True, capture_output=True, text=True, timeout=120, **self._run_as
        )

    def start(self) -> PostgresCluster:
        """initdb, then start the server and wait until it accepts connections.

        Raises:
            RuntimeError: It did not start (with the command's output and the server log).
        """
        try:
            self._init_and_start()
        except subprocess.CalledProcessError as exc:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            shutil.rmtree(self.root, ignore_errors=True)
            raise RuntimeError(
                f"PostgreSQL did not start: {exc.cmd[0]}: {exc.stderr or exc.stdout}\n{tail}"
            ) from None
        return self

    def _init_and_start(self) -> None:
        self._run(
            str(self.bin_dir / "initdb"),
            "-D",
            str(self.data),
            "-U",
            self.user,
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
        )
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            "-c max_connections=200 -c shared_buffers=32MB"
        )
        self._run(
            str(self.bin_dir / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.root / "server.log"),
            "-w",
            "-t",
            "60",
            "start",
        )

    def url(self, dbname: str = "postgres") -> str:
        """A ``postgresql://`` URL of database ``dbname`` over loopback TCP."""
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self) -> str:
        """A new empty database; its URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        """Stop the server (fast mode) and delete the cluster's folder."""
        try:
            self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
