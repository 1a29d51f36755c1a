"""Fixtures for the backend tests: the app served by uvicorn on a loopback port, in a thread."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fake_model import numbers_resources  # noqa: E402
from pg_cluster import PostgresCluster, require_postgres  # noqa: E402
from tablerag_agents.graphs import Context  # noqa: E402

from tablerag_agents.resources import Resources  # noqa: E402
from tablerag_agents.server import create_app  # noqa: E402


class LiveServer:
    """uvicorn serving an app on 127.0.0.1 (port 0) in a background thread."""

    def __init__(self, app: Any) -> None:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    @property
    def url(self) -> str:
        """The base URL."""
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def client(self, token: str | None = None, timeout: float = 60) -> httpx.Client:
        """An HTTP client for this server (with the bearer token when given)."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=timeout)

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        assert not self.thread.is_alive(), "uvicorn did not stop"


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., LiveServer]]:
    """Start servers over fresh resources (``resources=`` to share); all stopped after the test."""
    started: list[tuple[LiveServer, Resources]] = []

    def start(resources: Resources | None = None, **kwargs: Any) -> LiveServer:
        res = resources or numbers_resources()
        kwargs.setdefault("db_path", tmp_path / "threads.sqlite")
        kwargs.setdefault("context", Context(solver="sql"))
        live = LiveServer(create_app(res, **kwargs)).__enter__()
        started.append((live, res))
        return live

    yield start
    for live, res in reversed(started):
        if live.thread.is_alive():
            live.__exit__()
        res.close()


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """One throwaway PostgreSQL cluster for the session (skips without PostgreSQL, not in CI)."""
    pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    cluster = PostgresCluster(require_postgres()).start()
    yield cluster
    cluster.stop()


@pytest.fixture
def postgres_url(postgres_cluster: PostgresCluster) -> str:
    """The URL of a fresh, empty database of the session's cluster."""
    return postgres_cluster.create_database()
