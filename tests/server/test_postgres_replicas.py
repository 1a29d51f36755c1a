"""Two replicas of the server sharing one real PostgreSQL database (a throwaway cluster).

Each replica is its own app, uvicorn server, event loop, resources and fake
model; all they share is the database, as two ``tablerag serve --db
postgresql://...`` processes behind one address would.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from fake_model import ProgramChatModel, expected_total, numbers_resources, question

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

ALICE, BOB = "alice-token", "bob-token"


def _ask(client, thread_id: str, limit: int, prefix: str = "") -> dict:
    response = client.post(
        f"/threads/{thread_id}/messages", json={"content": question(limit, prefix)}
    )
    assert response.status_code == 200, response.text
    return response.json()["message"]


def _history(client, thread_id: str) -> list[tuple[str, str]]:
    messages = client.get(f"/threads/{thread_id}/messages").json()["messages"]
    return [
        (m["role"], m["content"] if m["role"] == "user" else m["answer"]["text"]) for m in messages
    ]


@pytest.fixture
def replicas(serve, postgres_url, tmp_path):
    """Start ``n`` replicas on the test's database (``model=`` for a shared fake model)."""

    def start(n: int = 2, model=None, **kwargs):
        return [
            serve(
                numbers_resources(model or ProgramChatModel()),
                db_path=postgres_url,
                upload_dir=tmp_path / f"uploads-{i}",
                **kwargs,
            )
            for i in range(n)
        ]

    return start


def test_turns_alternating_between_replicas_keep_each_conversations_history(replicas) -> None:
    a, b = replicas(token=[ALICE, BOB])
    with a.client(ALICE) as alice_a, b.client(ALICE) as alice_b, b.client(BOB) as bob_b:
        first = alice_a.post("/threads").json()["thread_id"]
        second = alice_b.post("/threads").json()["thread_id"]
        expected: dict[str, list[tuple[str, str]]] = {first: [], second: []}
        for turn in range(3):
            for thread_id, tag in ((first, "[one]"), (second, "[two]")):
                client = (alice_a, alice_b)[(turn + (thread_id == second)) % 2]
                limit = 10 * turn + (1 if thread_id == first else 2)
                reply = _ask(client, thread_id, limit, tag)
                assert reply["answer"]["text"] == str(expected_total(limit))
                expected[thread_id] += [
                    ("user", question(limit, tag)),
                    ("assistant", str(expected_total(limit))),
                ]
        for thread_id, messages in expected.items():
            assert _history(alice_a, thread_id) == _history(alice_b, thread_id) == messages
        assert alice_b.get(f"/threads/{first}").json()["message_count"] == 6
        listed = [t["thread_id"] for t in alice_a.get("/threads").json()["threads"]]
        assert listed == [second, first]
        assert bob_b.get("/threads").json()["threads"] == []
        assert bob_b.get(f"/threads/{first}").status_code == 404  # owners hold across replicas
        assert a.client().get("/health").json()["database"] == "postgres"


def test_two_turns_of_one_thread_on_two_replicas_take_turns(replicas) -> None:
    a, b = replicas(model=ProgramChatModel(delay_s=0.4))
    with a.client() as on_a, b.client() as on_b, ThreadPoolExecutor(2) as pool:
        thread_id = on_a.post("/threads").json()["thread_id"]
        racing = [
            pool.submit(_ask, on_a, thread_id, 7, "[a]"),
            pool.submit(_ask, on_b, thread_id, 8, "[b]"),
        ]
        answers = {f.result(timeout=60)["answer"]["text"] for f in racing}
        assert answers == {str(expected_total(7)), str(expected_total(8))}
        history = _history(on_b, thread_id)
    # Both turns are kept, one after the other: neither run overwrote the other's.
    turns = {tuple(history[:2]), tuple(history[2:])}
    assert len(history) == 4 and turns == {
        (("user", question(7, "[a]")), ("assistant", str(expected_total(7)))),
        (("user", question(8, "[b]")), ("assistant", str(expected_total(8)))),
    }


def test_deleting_on_one_replica_removes_the_thread_and_checkpoints_for_all(
    replicas, postgres_url
) -> None:
    gate = threading.Event()
    a, b = replicas(model=ProgramChatModel(gate=gate))
    with a.client() as on_a, b.client() as on_b, ThreadPoolExecutor(1) as pool:
        thread_id = on_a.post("/threads").json()["thread_id"]
        kept = on_b.post("/threads").json()["thread_id"]
        answering = pool.submit(_ask, on_a, thread_id, 3)
        while on_a.get("/health").json()["runs"] < 1:
            time.sleep(0.02)
        busy = on_b.delete(f"/threads/{thread_id}")  # the run on replica A holds the thread
        gate.set()
        assert busy.status_code == 409, busy.text
        assert answering.result(timeout=30)["answer"]["text"] == "14"
        _ask(on_b, kept, 2)
        assert on_b.delete(f"/threads/{thread_id}").status_code == 204
        assert on_a.get(f"/threads/{thread_id}").status_code == 404
        assert on_a.get(f"/threads/{thread_id}/messages").status_code == 404
        assert [t["thread_id"] for t in on_a.get("/threads").json()["threads"]] == [kept]
    with psycopg.connect(postgres_url) as conn:
        counts = {
            table: conn.execute(
                f"SELECT COUNT(*) FILTER (WHERE thread_id = %s), COUNT(*) FROM {table}",
                (thread_id,),
            ).fetchone()
            for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
        }
    assert all(gone == 0 for gone, _ in counts.values())
    assert counts["checkpoints"][1] > 0  # the other thread's checkpoints are still there


def test_replicas_starting_together_set_the_schema_up_once(postgres_url, serve, tmp_path) -> None:
    with ThreadPoolExecutor(3) as pool:
        started = list(
            pool.map(lambda i: serve(db_path=postgres_url, upload_dir=tmp_path / f"u{i}"), range(3))
        )
    for live in started:
        with live.client() as client:
            assert client.get("/health").json() == {
                "status": "ok",
                "database": "postgres",
                "runs": 0,
                "max_runs": 32,
            }


def test_serve_with_an_unreachable_database_fails_with_a_clear_error_without_the_password() -> None:
    from typer.testing import CliRunner

    from tablerag_agents.cli import app

    result = CliRunner().invoke(app, ["serve", "--db", "postgresql://me:s3cret-pw@127.0.0.1:1/x"])
    assert result.exit_code == 1
    assert "cannot connect to postgresql://me@127.0.0.1:1/x" in result.output
    assert "s3cret-pw" not in result.output


SQUARES = b"n,value\n1,1\n2,4\n3,9\n"


def _upload(client, name: str = "squares.csv"):
    return client.post("/tables", files={"file": (name, SQUARES)})


def _table_ids(client) -> list[str]:
    return sorted(t["id"] for t in client.get("/tables").json()["tables"])


def test_an_upload_on_one_replica_is_usable_and_deletable_on_the_other(replicas) -> None:
    a, b = replicas(token=[ALICE, BOB], max_uploads=2)
    with a.client(ALICE) as alice_a, b.client(ALICE) as alice_b, b.client(BOB) as bob_b:
        uploaded = _upload(alice_a)
        assert uploaded.status_code == 201, uploaded.text
        mine = uploaded.json()["id"]
        # Replica B has never seen it: naming it makes B catch up at once.
        created = alice_b.post("/threads", json={"tables": [mine]})
        assert created.status_code == 201, created.text
        thread_id = created.json()["thread_id"]
        reply = _ask(alice_b, thread_id, 3)
        assert reply["answer"]["text"] == "14" and reply["answer"]["table_ids"] == [mine]
        assert _table_ids(alice_b) == sorted(["numbers", mine])
        assert _table_ids(bob_b) == ["numbers"]  # owners hold across replicas
        assert bob_b.delete(f"/tables/{mine}").status_code == 404
        # The quota counts both replicas' uploads.
        assert _upload(alice_b, "two.csv").status_code == 201
        full = _upload(alice_a, "three.csv")
        assert full.status_code == 507 and "max_uploads=2" in full.json()["error"]["message"]
        assert alice_b.delete(f"/tables/{mine}").status_code == 204
        deadline = time.monotonic() + 5  # replica A drops it at its next sync (<= 1 s)
        while mine in _table_ids(alice_a):
            assert time.monotonic() < deadline
            time.sleep(0.2)
        refused = alice_a.post(f"/threads/{thread_id}/messages", json={"content": question(3)})
        assert refused.status_code == 422 and "unknown table id" in refused.text
        assert _upload(alice_a, "three.csv").status_code == 201  # room again


def test_a_restarted_replica_loads_the_uploads_of_all(replicas, serve, postgres_url, tmp_path):
    (a,) = replicas(1)
    with a.client() as client:
        mine = _upload(client).json()["id"]
    late = serve(numbers_resources(), db_path=postgres_url, upload_dir=tmp_path / "late")
    with late.client() as client:
        assert mine in _table_ids(client)
