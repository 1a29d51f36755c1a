"""Listing and deleting threads, /health, and the bound on concurrent runs (SQLite backend)."""

from __future__ import annotations

import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from fake_model import ProgramChatModel, expected_total, numbers_resources, question

ALICE, BOB = "alice-token", "bob-token"


def _ask(client, thread_id: str, limit: int):
    return client.post(f"/threads/{thread_id}/messages", json={"content": question(limit)})


def _pages(client, limit: int, **params) -> list[dict]:
    pages, cursor = [], None
    while True:
        query = {"limit": limit, **params, **({"cursor": cursor} if cursor else {})}
        response = client.get("/threads", params=query)
        assert response.status_code == 200, response.text
        pages.append(response.json())
        cursor = response.json()["next_cursor"]
        if cursor is None:
            return pages


def test_threads_are_listed_newest_first_in_pages_of_the_callers_own(serve) -> None:
    live = serve(token=[ALICE, BOB])
    with live.client(ALICE) as alice, live.client(BOB) as bob:
        mine = [alice.post("/threads").json()["thread_id"] for _ in range(5)]
        theirs = bob.post("/threads").json()["thread_id"]
        pages = _pages(alice, limit=2)
        assert [len(p["threads"]) for p in pages] == [2, 2, 1]
        listed = [t["thread_id"] for p in pages for t in p["threads"]]
        assert listed == mine[::-1]  # newest first, each once, never Bob's
        assert pages[0]["threads"][0].keys() == {"thread_id", "created_at", "tables"}
        assert [t["thread_id"] for t in bob.get("/threads").json()["threads"]] == [theirs]
        one_page = alice.get("/threads").json()
        assert len(one_page["threads"]) == 5 and one_page["next_cursor"] is None
        bad = alice.get("/threads", params={"cursor": "not-a-cursor"})
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "bad_cursor"
        assert alice.get("/threads", params={"limit": 0}).status_code == 422
        assert alice.get("/threads", params={"limit": 101}).status_code == 422


def test_deleting_a_thread_removes_its_checkpoints_and_only_its_owner_may(serve, tmp_path) -> None:
    db = tmp_path / "threads.sqlite"
    live = serve(token=[ALICE, BOB], db_path=db)
    with live.client(ALICE) as alice, live.client(BOB) as bob:
        gone, kept = (alice.post("/threads").json()["thread_id"] for _ in range(2))
        for thread_id in (gone, kept):
            assert _ask(alice, thread_id, 3).status_code == 200
        assert bob.delete(f"/threads/{gone}").status_code == 404  # not Bob's
        assert alice.delete(f"/threads/{gone}").status_code == 204
        assert alice.get(f"/threads/{gone}").status_code == 404
        assert _ask(alice, gone, 3).status_code == 404
        assert alice.delete(f"/threads/{gone}").status_code == 404
        listed = [t["thread_id"] for t in alice.get("/threads").json()["threads"]]
        assert listed == [kept]
        assert alice.get(f"/threads/{kept}").json()["message_count"] == 2
        with sqlite3.connect(db) as conn:
            rows = dict(conn.execute("SELECT thread_id, COUNT(*) FROM checkpoints GROUP BY 1"))
            writes = conn.execute(
                "SELECT COUNT(*) FROM writes WHERE thread_id = ?", (gone,)
            ).fetchone()
            conn.execute(
                "INSERT INTO tablerag_threads VALUES ('legacy', 1.0, '[]', NULL)"
            )  # a thread from before owners: every client's, nobody's to delete
        assert gone not in rows and rows[kept] > 0 and writes == (0,)
        refused = alice.delete("/threads/legacy")
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"


def test_a_thread_cannot_be_deleted_while_a_message_is_answered(serve) -> None:
    gate = threading.Event()
    live = serve(numbers_resources(ProgramChatModel(gate=gate)))
    with live.client() as client, live.client() as other, ThreadPoolExecutor(1) as pool:
        thread_id = client.post("/threads").json()["thread_id"]
        answering = pool.submit(_ask, client, thread_id, 4)
        while other.get("/health").json()["runs"] < 1:
            time.sleep(0.02)
        busy = other.delete(f"/threads/{thread_id}")
        gate.set()
        assert busy.status_code == 409 and busy.json()["error"]["code"] == "thread_busy"
        assert answering.result(timeout=30).json()["message"]["answer"]["text"] == "30"
        assert other.delete(f"/threads/{thread_id}").status_code == 204


def test_a_full_server_answers_503_with_retry_after(serve) -> None:
    gate = threading.Event()
    live = serve(numbers_resources(ProgramChatModel(gate=gate)), max_runs=1)
    with live.client() as client, live.client() as other, ThreadPoolExecutor(1) as pool:
        first, second = (client.post("/threads").json()["thread_id"] for _ in range(2))
        answering = pool.submit(_ask, client, first, 5)
        while (health := other.get("/health").json())["runs"] < 1:
            time.sleep(0.02)
        assert health == {"status": "ok", "database": "sqlite", "runs": 1, "max_runs": 1}
        full = _ask(other, second, 6)
        chat = other.post(
            "/v1/chat/completions",
            json={"model": "tablerag", "messages": [{"role": "user", "content": question(6)}]},
        )
        gate.set()
        assert full.status_code == 503 and full.headers["Retry-After"] == "5"
        error = full.json()["error"]
        assert error["code"] == "busy" and "max_runs=1" in error["message"]
        assert chat.status_code == 503 and chat.headers["Retry-After"] == "5"
        assert answering.result(timeout=30).status_code == 200
        again = _ask(other, second, 6)
        assert again.status_code == 200
        assert again.json()["message"]["answer"]["text"] == str(expected_total(6))
        # the refused message left no trace in the thread
        assert other.get(f"/threads/{second}").json()["message_count"] == 2


def test_health_needs_no_token_and_shows_no_client_data(serve) -> None:
    live = serve(token=[ALICE])
    with live.client() as anonymous:
        health = anonymous.get("/health")
        assert health.status_code == 200 and health.json()["status"] == "ok"
        assert anonymous.get("/threads").status_code == 401
        assert anonymous.post("/health").status_code == 401  # only GET is open
