"""Run the backend with uvicorn: what ``tablerag serve`` calls."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from tablerag_agents.config import Settings
from tablerag_agents.graphs import Context
from tablerag_agents.resources import Resources
from tablerag_agents.server.runs import DEFAULT_MAX_RUNS

logger = logging.getLogger(__name__)


def default_db_path(settings: Settings) -> Path:
    """Where threads are kept when ``--db`` is not given."""
    return Path(settings.cache_dir) / "server" / "threads.sqlite"


def serve(
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | Sequence[str] | None = None,
    db_path: str | Path | None = None,
    index_dir: Path | None = None,
    tables_dir: Path | None = None,
    max_upload_bytes: int,
    max_uploads: int,
    max_upload_total_bytes: int,
    context: Context | None = None,
    max_runs: int = DEFAULT_MAX_RUNS,
    announce: Callable[[str], None] = logger.info,
) -> None:
    """Serve the graph until interrupted; the resources are closed at the end.

    Arguments are those of :func:`~tablerag_agents.server.create_app`, plus
    ``tables_dir`` (a folder of table files to register) and ``announce``
    (receives one-line start-up notes).

    Raises:
        ValueError: ``tables_dir`` or ``index_dir`` is not a folder.
        DatabaseError: ``db_path`` is a PostgreSQL URL that cannot be reached.
    """
    import uvicorn

    from tablerag_agents.server.app import create_app
    from tablerag_agents.server.database import describe_db, is_postgres_url

    for name, folder in (("--tables", tables_dir), ("--index", index_dir)):
        if folder is not None and not folder.is_dir():
            raise ValueError(f"{name} {folder}: not a folder")
    settings = Settings()
    db = db_path or default_db_path(settings)
    if is_postgres_url(str(db)):
        from tablerag_agents.server.postgres import check_postgres

        check_postgres(str(db))  # a bad URL fails here, with its reason, not in uvicorn
    announce(f"threads in {describe_db(db)}; at most {max_runs} runs at once")
    with Resources(settings) as resources:
        app = create_app(
            resources,
            db_path=db,
            token=token,
            max_upload_bytes=max_upload_bytes,
            max_uploads=max_uploads,
            max_upload_total_bytes=max_upload_total_bytes,
            index_dir=index_dir,
            context=context,
            max_runs=max_runs,
        )
        if tables_dir is not None:
            count = app.state.server.uploads.register_folder(tables_dir)
            announce(f"registered {count} tables from {tables_dir}")
        if host not in ("127.0.0.1", "localhost", "::1") and not token:
            announce(f"warning: {host} without --token: anyone who can reach it can use it")
        uvicorn.run(app, host=host, port=port, log_level="info")
