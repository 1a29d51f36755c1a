"""Issue 21 items 1 and 4 through the server: a hostile upload is a 422 naming the limit,
and the server answers other requests while it is being read."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
import hostile_files as hostile  # noqa: E402
from fake_model import numbers_resources  # noqa: E402

from tablerag_agents.server import create_app  # noqa: E402


@pytest.fixture
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The app over the fake resources, with small load limits from the environment."""
    monkeypatch.setenv("TABLERAG_LOAD_CPU_SECONDS", "2")
    monkeypatch.setenv("TABLERAG_LOAD_WALL_SECONDS", "60")
    monkeypatch.setenv("TABLERAG_LOAD_MEMORY_MB", "256")
    resources = numbers_resources()
    app = create_app(resources, db_path=tmp_path / "t.sqlite", upload_dir=tmp_path / "up")
    with TestClient(app) as test_client:
        yield test_client
    resources.close()


def _upload(client: TestClient, path: Path) -> Any:
    return client.post("/tables", files={"file": (path.name, path.read_bytes())})


def test_unparsable_uploads_are_422_not_500(client: TestClient, tmp_path: Path) -> None:
    deep = _upload(client, hostile.deep_json(tmp_path / "deep.json"))
    assert deep.status_code == 422, deep.text
    assert deep.json()["error"]["message"] == (
        "cannot load 'deep.json': nested too deeply to parse (past Python's recursion limit)"
    )
    book = _upload(client, hostile.malformed_workbook(tmp_path / "book.xlsx"))
    assert book.status_code == 422 and "XMLSyntaxError" in book.json()["error"]["message"]


def test_a_spinning_upload_is_stopped_and_other_requests_are_served(
    client: TestClient, tmp_path: Path
) -> None:
    endless = hostile.sqlite_with_view(tmp_path / "spin.sqlite", hostile.SQLITE_ENDLESS_CTE)
    response: dict[str, Any] = {}
    upload = threading.Thread(target=lambda: response.update(r=_upload(client, endless)))
    upload.start()
    time.sleep(0.5)
    latencies = []
    while upload.is_alive() and len(latencies) < 5:
        started = time.monotonic()
        assert client.get("/tables").status_code == 200
        latencies.append(time.monotonic() - started)
    upload.join(timeout=90)
    assert latencies and max(latencies) < 3.0, latencies
    spun = response["r"]
    assert spun.status_code == 422, spun.text
    assert spun.json()["error"]["message"] == (
        "cannot load 'spin.sqlite': exceeded the CPU time limit of 2 s"
    )
