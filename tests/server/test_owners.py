"""Two clients of one server: each sees, uses and deletes only its own uploads and threads."""

from __future__ import annotations

from fake_model import question

ALICE, BOB = "alice-token", "bob-token"
SQUARES = b"n,value\n1,1\n2,4\n3,9\n"  # like the shared "numbers" table, 3 rows


def _error(response) -> str:
    return response.json()["error"]["message"]


def _ids(client) -> list[str]:
    response = client.get("/tables")
    assert response.status_code == 200, response.text
    return sorted(t["id"] for t in response.json()["tables"])


def _upload(client, name: str = "squares.csv") -> str:
    response = client.post("/tables", files={"file": (name, SQUARES)})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def _ask(client, thread_id: str, **body):
    return client.post(f"/threads/{thread_id}/messages", json={"content": question(3), **body})


def test_a_client_cannot_list_use_or_delete_another_clients_table(serve) -> None:
    live = serve(token=[ALICE, BOB])
    with live.client(ALICE) as alice, live.client(BOB) as bob:
        mine = _upload(alice)
        assert _ids(alice) == sorted(["numbers", mine]) and _ids(bob) == ["numbers"]
        refused = bob.post("/threads", json={"tables": [mine]})
        assert refused.status_code == 422 and "unknown table id(s)" in _error(refused)
        assert mine not in _error(refused).split("use:")[1]  # not listed to Bob either
        thread_id = bob.post("/threads").json()["thread_id"]
        assert _ask(bob, thread_id, tables=[mine]).status_code == 422
        chat = bob.post(
            "/v1/chat/completions",
            json={
                "model": "tablerag",
                "messages": [{"role": "user", "content": question(3)}],
                "tables": [mine],
            },
        )
        assert chat.status_code == 422 and "unknown table" in _error(chat)
        # Without tables, Bob's question is answered over what Bob may use: "numbers" only.
        answer = _ask(bob, thread_id).json()["message"]["answer"]
        assert answer["table_ids"] == ["numbers"] and answer["text"] == "14"
        assert bob.delete(f"/tables/{mine}").status_code == 404
        assert bob.delete("/tables/numbers").status_code == 403  # the server's table
        # Alice still has it and answers over it.
        own = alice.post("/threads", json={"tables": [mine]}).json()["thread_id"]
        reply = _ask(alice, own).json()["message"]["answer"]
        assert reply["table_ids"] == [mine] and reply["text"] == "14"


def test_threads_belong_to_their_client_and_tables_are_checked_on_every_message(serve) -> None:
    live = serve(token=[ALICE, BOB])
    with live.client(ALICE) as alice, live.client(BOB) as bob:
        mine = _upload(alice)
        thread_id = alice.post("/threads", json={"tables": [mine]}).json()["thread_id"]
        assert _ask(alice, thread_id).status_code == 200
        for response in (
            bob.get(f"/threads/{thread_id}"),
            bob.get(f"/threads/{thread_id}/messages"),
            _ask(bob, thread_id),
        ):
            assert response.status_code == 404 and "no thread" in _error(response)
        assert alice.delete(f"/tables/{mine}").status_code == 204
        assert _ids(alice) == ["numbers"]
        again = _ask(alice, thread_id)  # the thread still names the deleted table
        assert again.status_code == 422 and mine in _error(again)
        assert alice.delete(f"/tables/{mine}").status_code == 404
        moved_on = _ask(alice, thread_id, tables=[])  # back to the tables Alice may use
        assert moved_on.status_code == 200, moved_on.text
        assert moved_on.json()["message"]["answer"]["table_ids"] == ["numbers"]


def test_one_token_can_keep_its_users_apart_with_a_client_id(serve) -> None:
    live = serve(token=ALICE)
    with live.client(ALICE) as front_end:
        ann = {"X-Tablerag-Client": "ann@example.org"}
        ben = {"X-Tablerag-Client": "ben"}
        upload = front_end.post("/tables", files={"file": ("s.csv", SQUARES)}, headers=ann)
        table_id = upload.json()["id"]
        listed = front_end.get("/tables", headers=ben).json()["tables"]
        assert [t["id"] for t in listed] == ["numbers"]
        assert table_id in [t["id"] for t in front_end.get("/tables", headers=ann).json()["tables"]]
        assert table_id not in _ids(front_end)  # the token without a client id is another one
        bad = front_end.get("/tables", headers={"X-Tablerag-Client": "../../etc"})
        assert bad.status_code == 400 and "X-Tablerag-Client" in _error(bad)


def test_owners_survive_a_restart(serve) -> None:
    live = serve(token=[ALICE, BOB])
    with live.client(ALICE) as alice:
        mine = _upload(alice)
        thread_id = alice.post("/threads", json={"tables": [mine]}).json()["thread_id"]
    live.__exit__()
    again = serve(token=[ALICE, BOB])
    with again.client(ALICE) as alice, again.client(BOB) as bob:
        assert _ids(bob) == ["numbers"] and mine in _ids(alice)
        assert bob.get(f"/threads/{thread_id}").status_code == 404
        assert _ask(alice, thread_id).json()["message"]["answer"]["text"] == "14"


def test_a_thread_registry_from_before_owners_is_upgraded(tmp_path) -> None:
    import asyncio
    import sqlite3

    from tablerag_agents.server.store import SqliteThreadStore

    db = tmp_path / "old.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute(
            "CREATE TABLE tablerag_threads "
            "(thread_id TEXT PRIMARY KEY, created_at REAL NOT NULL, tables TEXT NOT NULL)"
        )
        conn.execute("INSERT INTO tablerag_threads VALUES ('old', 1.0, '[\"numbers\"]')")

    async def check() -> None:
        store = await SqliteThreadStore.open(db)
        try:
            old = await store.get("old", "anyone")  # no owner: as before, any client's
            assert old is not None and old.tables == ["numbers"] and old.owner is None
            new = await store.create(["numbers"], "token-a")
            assert await store.get(new.thread_id, "token-b") is None
            assert (await store.get(new.thread_id, "token-a")) == new
        finally:
            await store.close()

    asyncio.run(check())
