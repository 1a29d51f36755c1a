"""Bad requests get a clear JSON 4xx, failed runs a JSON 5xx, and the service keeps serving."""

from __future__ import annotations

from typing import Any

import pytest
from fake_model import ProgramChatModel, numbers_resources, question
from sse_client import iter_events

from tablerag_agents.resources import Resources


class CrashingModel(ProgramChatModel):
    """Fails like a model server that went away."""

    def reply_for(self, messages: list[Any]) -> str:
        raise RuntimeError("connection reset by the model server")


def _error(response) -> str:
    body = response.json()
    assert set(body) == {"error"} and body["error"]["message"]
    return body["error"]["message"]


def test_unknown_threads_are_404(serve) -> None:
    with serve().client() as client:
        for response in (
            client.get("/threads/nope"),
            client.get("/threads/nope/messages"),
            client.post("/threads/nope/messages", json={"content": question(3)}),
        ):
            assert response.status_code == 404
            assert "no thread 'nope'" in _error(response)
        assert client.get("/nowhere").status_code == 404
        assert "no such endpoint" in _error(client.get("/nowhere"))
        assert client.delete("/threads").status_code == 405


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (b'{"content": ', 400, "malformed JSON"),
        (b"[1, 2]", 422, "JSON object"),
        (b'{"content": "   "}', 422, "the question is empty"),
        (b"{}", 422, "content: Field required"),
        (b'{"content": "hi", "colour": 1}', 422, "colour: Extra inputs are not permitted"),
        (b'{"content": "hi", "tables": ["nope"]}', 422, "unknown table id(s) ['nope']"),
        (b'{"content": "hi", "tables": ["/etc/passwd"]}', 422, "unknown table id(s)"),
    ],
)
def test_bad_messages_get_a_clear_4xx(serve, body: bytes, status: int, message: str) -> None:
    with serve().client() as client:
        thread_id = client.post("/threads").json()["thread_id"]
        response = client.post(
            f"/threads/{thread_id}/messages",
            content=body,
            headers={"Content-Type": "application/json"},
        )
        assert response.status_code == status and message in _error(response)
        assert client.get(f"/threads/{thread_id}/messages").json()["messages"] == []
        ok = client.post(f"/threads/{thread_id}/messages", json={"content": question(4)})
        assert ok.json()["message"]["answer"]["text"] == "30"  # still serving


def test_a_thread_cannot_name_a_server_file(serve) -> None:
    with serve().client() as client:
        response = client.post("/threads", json={"tables": ["/etc/passwd"]})
        assert response.status_code == 422 and "unknown table id" in _error(response)


def test_no_tables_at_all_is_a_clear_422(serve) -> None:
    empty = Resources(chat_model=ProgramChatModel())
    with serve(empty).client() as client:
        thread_id = client.post("/threads").json()["thread_id"]
        response = client.post(f"/threads/{thread_id}/messages", json={"content": question(2)})
        assert response.status_code == 422 and "POST /tables" in _error(response)


def test_a_failed_run_is_a_json_500_and_its_question_is_kept(serve) -> None:
    crashing = numbers_resources(CrashingModel())
    with serve(crashing).client() as client:
        thread_id = client.post("/threads").json()["thread_id"]
        response = client.post(f"/threads/{thread_id}/messages", json={"content": question(2)})
        assert response.status_code == 500 and "RuntimeError" in _error(response)
        with client.stream(
            "POST",
            f"/threads/{thread_id}/messages?stream=true",
            json={"content": question(2)},
        ) as streamed:
            events = list(iter_events(streamed))
        assert events[-1].name == "error" and events[-1].data["status"] == 500
        assert client.get(f"/threads/{thread_id}").status_code == 200
        # The questions were recorded even though no answer came.
        history = client.get(f"/threads/{thread_id}/messages").json()["messages"]
        assert [m["content"] for m in history] == [question(2), question(2)]
