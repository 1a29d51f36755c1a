"""Fixtures for sources: the sales table in SQLite, PostgreSQL (a throwaway cluster) and files."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))

from pg_cluster import PostgresCluster, require_postgres  # noqa: E402
from source_data import write_postgres, write_sqlite  # noqa: E402


@pytest.fixture
def sqlite_path(tmp_path: Path) -> Path:
    """A SQLite file holding ``sales`` (600 rows) and ``other``."""
    return write_sqlite(tmp_path / "shop.db")


@pytest.fixture
def sqlite_url(sqlite_path: Path) -> str:
    """Its SQLAlchemy URL."""
    return f"sqlite:///{sqlite_path}"


@pytest.fixture(scope="module")
def pg_cluster() -> Iterator[PostgresCluster]:
    """A throwaway PostgreSQL cluster (skips without PostgreSQL, fails in CI)."""
    pytest.importorskip("psycopg", reason="psycopg is not installed")
    cluster = PostgresCluster(require_postgres()).start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def pg_url(pg_cluster: PostgresCluster) -> str:
    """A database of that cluster holding ``sales`` and the sequence ``counter``."""
    url = pg_cluster.create_database()
    write_postgres(url)
    return url
