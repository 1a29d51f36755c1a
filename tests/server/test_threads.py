"""Thread endpoints over real HTTP: answers, history, streaming, isolation, restarts."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from fake_model import (
    ProgramChatModel,
    expected_total,
    lookup_question,
    numbers_resources,
    question,
)
from sse_client import iter_events


def _ask(client, thread_id: str, content: str, **extra) -> dict:
    response = client.post(f"/threads/{thread_id}/messages", json={"content": content, **extra})
    assert response.status_code == 200, response.text
    return response.json()["message"]


def _history(client, thread_id: str) -> list[tuple[str, str]]:
    messages = client.get(f"/threads/{thread_id}/messages").json()["messages"]
    return [(m["role"], m["content"]) for m in messages]


def test_a_thread_answers_with_cited_cells_and_keeps_its_history(serve) -> None:
    with serve().client() as client:
        created = client.post("/threads")
        assert created.status_code == 201
        thread_id = created.json()["thread_id"]
        first = _ask(client, thread_id, question(10))
        assert first["role"] == "assistant" and first["answer"]["text"] == "385"
        assert "385" in first["content"] and first["answer"]["table_ids"] == ["numbers"]
        second = _ask(client, thread_id, lookup_question(49))
        assert second["answer"]["text"] == "7"
        assert {"column": "n", "value": "7"}.items() <= second["answer"]["cited_cells"][0].items()
        assert _history(client, thread_id) == [
            ("user", question(10)),
            ("assistant", first["content"]),
            ("user", lookup_question(49)),
            ("assistant", second["content"]),
        ]
        info = client.get(f"/threads/{thread_id}").json()
        assert info["message_count"] == 4 and info["table_ids"] == ["numbers"]


def test_streaming_delivers_events_while_the_run_is_still_going(serve) -> None:
    gate = threading.Event()
    live = serve(numbers_resources(ProgramChatModel(gate=gate)))
    with live.client() as client, live.client() as observer:
        thread_id = client.post("/threads").json()["thread_id"]
        seen, during_run = [], None
        with client.stream(
            "POST",
            f"/threads/{thread_id}/messages",
            params={"stream": "true"},
            json={"content": lookup_question(144)},
        ) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            for event in iter_events(response):
                seen.append((time.monotonic(), event))
                if event.name == "progress" and event.data.get("step") == "sql":
                    # The solver's model call waits on the gate: the run cannot have ended.
                    # (The checkpoint after `prepare` is written in the background: poll.)
                    deadline = time.monotonic() + 10
                    while not (during_run := _history(observer, thread_id)):
                        assert time.monotonic() < deadline
                        time.sleep(0.02)
                    time.sleep(0.3)
                    gate.set()
    names = [event.name for _, event in seen]
    assert during_run == [("user", lookup_question(144))]
    assert names[0] == "metadata" and names[-1] == "answer"
    assert {"updates", "token", "progress"} <= set(names)
    updates = [e.data["node"] for _, e in seen if e.name == "updates"]
    assert updates == ["prepare", "solve", "answer"]
    assert seen[-1][0] - seen[0][0] >= 0.3  # events came one by one, not as one body
    tokens = "".join(
        e.data["content"] for _, e in seen if e.name == "token" and e.data["node"] == "solve"
    )
    assert '"value" = 144' in tokens
    final = seen[-1][1].data
    assert final["thread_id"] == thread_id and final["message"]["answer"]["text"] == "12"
    assert final["message"]["answer"]["cited_cells"][0]["value"] == "12"


def test_two_threads_do_not_see_each_others_messages(serve) -> None:
    with serve().client() as client:
        a, b = (client.post("/threads").json()["thread_id"] for _ in range(2))
        with ThreadPoolExecutor(4) as pool:
            jobs = [
                pool.submit(_ask, client, thread, question(limit))
                for thread, limit in ((a, 5), (b, 6), (a, 7), (b, 8))
            ]
            answers = [job.result()["answer"]["text"] for job in jobs]
        assert answers == [str(expected_total(n)) for n in (5, 6, 7, 8)]
        for thread, limits in ((a, (5, 7)), (b, (6, 8))):
            asked = [text for role, text in _history(client, thread) if role == "user"]
            assert sorted(asked) == sorted(question(n) for n in limits)
            roles = [role for role, _ in _history(client, thread)]
            assert roles == ["user", "assistant", "user", "assistant"]  # runs took turns


def test_a_restart_keeps_the_history_and_uploaded_tables(serve, tmp_path) -> None:
    live = serve()
    with live.client() as client:
        upload = client.post(
            "/tables", files={"file": ("squares.csv", b"n,value\n1,1\n2,4\n3,9\n", "text/csv")}
        ).json()
        thread_id = client.post("/threads", json={"tables": [upload["id"]]}).json()["thread_id"]
        first = _ask(client, thread_id, question(3))
    live.__exit__()
    assert first["answer"]["table_ids"] == [upload["id"]] and first["answer"]["text"] == "14"

    restarted = serve(numbers_resources())  # new app and resources, same SQLite file
    with restarted.client() as client:
        assert _history(client, thread_id) == [
            ("user", question(3)),
            ("assistant", first["content"]),
        ]
        ids = [t["id"] for t in client.get("/tables").json()["tables"]]
        assert upload["id"] in ids
        again = _ask(client, thread_id, "and the total of value for n up to 2?")
        assert again["answer"]["text"] == "5" and again["answer"]["table_ids"] == [upload["id"]]
        assert len(_history(client, thread_id)) == 4


def test_an_uploaded_json_table_survives_a_restart(serve, tmp_path) -> None:
    rows = b'[{"n": 1, "value": 1}, {"n": 2, "value": 4}, {"n": 3, "value": 9}]'
    live = serve()
    with live.client() as client:
        upload = client.post("/tables", files={"file": ("squares.json", rows)})
        assert upload.status_code == 201, upload.text
        table_id = upload.json()["id"]
    live.__exit__()
    stored = tmp_path / "uploads"
    (data,) = (stored / "tables").iterdir()
    (manifest,) = (stored / "manifests").iterdir()
    assert data.suffix == manifest.suffix == ".json" and data.stem == manifest.stem
    assert data.read_bytes() == rows  # the manifest did not overwrite the table

    restarted = serve(numbers_resources())  # new app and resources, same data folder
    with restarted.client() as client:
        assert table_id in [t["id"] for t in client.get("/tables").json()["tables"]]
        thread_id = client.post("/threads", json={"tables": [table_id]}).json()["thread_id"]
        answer = _ask(client, thread_id, question(3))["answer"]
        assert answer["text"] == "14" and answer["table_ids"] == [table_id]


def test_runs_do_not_block_the_event_loop(serve) -> None:
    live = serve(numbers_resources(ProgramChatModel(delay_s=1.0)))
    with live.client() as client:
        threads = [client.post("/threads").json()["thread_id"] for _ in range(4)]
        started = time.monotonic()
        with ThreadPoolExecutor(5) as pool:
            jobs = [
                pool.submit(_ask, client, thread, question(20 + i))
                for i, thread in enumerate(threads)
            ]
            time.sleep(0.2)
            ping_started = time.monotonic()
            assert client.get("/v1/models").status_code == 200
            ping = time.monotonic() - ping_started
            answers = [job.result()["answer"]["text"] for job in jobs]
        elapsed = time.monotonic() - started
    assert answers == [str(expected_total(20 + i)) for i in range(4)]
    assert ping < 0.5  # a blocked loop would answer after the 1 s model calls
    assert elapsed < 4 * 1.0  # the runs overlapped


def test_a_run_finishes_and_is_stored_when_the_client_disconnects(serve) -> None:
    gate = threading.Event()
    live = serve(numbers_resources(ProgramChatModel(gate=gate)))
    with live.client() as client:
        thread_id = client.post("/threads").json()["thread_id"]
        with client.stream(
            "POST",
            f"/threads/{thread_id}/messages?stream=true",
            json={"content": question(6)},
        ) as response:
            first = next(iter_events(response))
        assert first.name == "metadata"  # then hung up, with the run waiting on the model
        gate.set()
        deadline = time.monotonic() + 20
        while len(history := _history(client, thread_id)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert history == [("user", question(6)), ("assistant", "The answer is 91.")]
