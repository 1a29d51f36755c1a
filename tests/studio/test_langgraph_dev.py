"""LangGraph Studio's server (``langgraph dev``) serves the graph offline on loopback.

The server runs as its own process from a temporary copy of the repo's
``langgraph.json`` (so ``.langgraph_api/`` lands in tmp), and the tests talk
to it with the langgraph-sdk client, as Studio does. The fast test points the
server at a scripted OpenAI-compatible server (``tests/openai_stub.py``: real
HTTP, the real ``ChatOpenAI`` client); the slow one uses the embedded model.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_sync_client
from openai_stub import OpenAIStub

REPO = Path(__file__).resolve().parents[2]
DATA = Path(str(files("tablerag_agents") / "data"))
GRAPH = "tablerag"
START_TIMEOUT = 120.0


@dataclass
class Server:
    """A running ``langgraph dev`` process."""

    url: str
    proc: subprocess.Popen[bytes]
    log: Path
    started_in: float

    def log_tail(self, chars: int = 4000) -> str:
        """The end of the server's output (for failure messages)."""
        return self.log.read_text(errors="replace")[-chars:]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _server_env(extra: dict[str, str]) -> dict[str, str]:
    """This environment without TABLERAG_* settings or tracing, plus ``extra``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TABLERAG_", "LANGSMITH_", "LANGCHAIN_"))
    }
    env.update(
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGGRAPH_NO_VERSION_CHECK="1",
        LANGSMITH_TRACING="false",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGINT, then SIGKILL to the whole process group if it does not exit."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


@contextmanager
def langgraph_dev(workdir: Path, env: dict[str, str]) -> Iterator[Server]:
    """Start ``langgraph dev`` on a loopback port in ``workdir``; stop it afterwards."""
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "langgraph.json"
    shutil.copy(REPO / "langgraph.json", config)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = workdir / "server.log"
    cli = shutil.which("langgraph", path=str(Path(sys.executable).parent)) or "langgraph"
    started = time.perf_counter()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [cli, "dev", "--host", "127.0.0.1", "--port", str(port), "--no-browser"]
            + ["--no-reload", "--config", str(config)],
            cwd=workdir,
            env=_server_env(env),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = Server(url, proc, log, 0.0)
    try:
        deadline = started + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"langgraph dev exited with {proc.returncode}:\n{server.log_tail()}")
            try:
                if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.perf_counter() > deadline:
                pytest.fail(f"langgraph dev not ready in {START_TIMEOUT}s:\n{server.log_tail()}")
            time.sleep(0.25)
        server.started_in = time.perf_counter() - started
        yield server
    finally:
        _stop(proc)


def _sql(template: str):
    """A stub reply: the SQL ``template`` with the question's year filled in."""
    return lambda match, _messages: "```sql\n" + template.format(**match.groupdict()) + "\n```"


ATTENDANCE_RULES = [
    (
        r"Follow-up question: and in 2003\?",
        "Standalone question: What was the average attendance in 2003?",
    ),
    (
        r"You write one DuckDB SQL query[\s\S]*"
        r"Question: What was the average attendance in (?P<year>\d{4})\?",
        _sql('SELECT "Avg. Attendance" FROM t WHERE "Year" = {year}'),
    ),
]


def test_langgraph_dev_serves_runs_streams_and_keeps_history(tmp_path: Path) -> None:
    table = "usl_a_league_team_seasons"  # an id of the deployment's table folder
    with OpenAIStub(ATTENDANCE_RULES) as stub:
        env = {
            "TABLERAG_CHAT_MODEL": "scripted",
            "TABLERAG_BASE_URL": stub.base_url,
            "TABLERAG_API_KEY": "stub-key",
            "TABLERAG_LLM_CACHE": "false",
            "TABLERAG_CACHE_DIR": str(tmp_path / "cache"),
            "TABLERAG_TABLES_DIR": str(DATA),
        }
        with langgraph_dev(tmp_path / "studio", env) as server:
            client = get_sync_client(url=server.url, timeout=120)
            assistants = client.assistants.search(graph_id=GRAPH)
            assert assistants and assistants[0]["graph_id"] == GRAPH
            thread = client.threads.create()
            thread_id = thread["thread_id"]

            # 1. A question run to the end.
            t0 = time.perf_counter()
            first = client.runs.wait(
                thread_id,
                GRAPH,
                input={"question": "What was the average attendance in 2002?", "tables": [table]},
                context={"solver": "sql"},
            )
            run_seconds = time.perf_counter() - t0
            assert isinstance(first, dict), first
            answer = first["answer"]
            assert answer["text"] == "6260" and answer["solver"] == "sql", answer
            assert answer["cited_cells"] == [
                {
                    "table": "usl_a_league_team_seasons",
                    "row": 1,
                    "column": "Avg. Attendance",
                    "value": "6,260",
                }
            ]
            assert [r["node"] for r in first["trace"]] == ["prepare", "solve", "answer"]
            assert [m["type"] for m in first["messages"]] == ["human", "ai"]
            assert stub.requests and {r["model"] for r in stub.requests} == {"scripted"}

            # 2. A follow-up on the same thread, streamed.
            seen: dict[str, list] = {}
            t0 = time.perf_counter()
            for part in client.runs.stream(
                thread_id,
                GRAPH,
                input={"question": "and in 2003?"},
                context={"solver": "sql"},
                stream_mode=["updates", "custom", "messages-tuple"],
            ):
                seen.setdefault(part.event.split("|")[0], []).append(part.data)
            stream_seconds = time.perf_counter() - t0
            assert "error" not in seen, seen.get("error")
            assert seen["metadata"][0]["run_id"]
            updates = [next(iter(u)) for u in seen["updates"]]
            assert updates == ["prepare", "solve", "answer"], updates
            final = seen["updates"][-1]["answer"]["answer"]
            assert final["text"] == "5871" and final["cited_cells"][0]["value"] == "5,871"
            rewritten = seen["updates"][0]["prepare"]["standalone_question"]
            assert rewritten == "What was the average attendance in 2003?"
            assert any(e.get("node") == "solve" for e in seen["custom"]), seen["custom"]
            # Tokens of the solver's model call, as [message chunk, metadata] pairs.
            tokens = [m for m, meta in seen["messages"] if meta.get("langgraph_node") == "solve"]
            assert len(tokens) > 3, tokens  # the reply came in pieces
            assert 'WHERE "Year" = 2003' in "".join(str(m.get("content", "")) for m in tokens)
            rewrite_prompt = next(p for p in stub.prompts() if "Follow-up question" in p)
            assert "What was the average attendance in 2002?" in rewrite_prompt

            # 3. The thread's history holds both turns.
            history = client.threads.get_history(thread_id, limit=100)
            latest = history[0]["values"]
            humans = [m["content"] for m in latest["messages"] if m["type"] == "human"]
            assert humans == [
                "What was the average attendance in 2002?",
                "and in 2003?",
            ]
            assert [m["type"] for m in latest["messages"]] == ["human", "ai", "human", "ai"]
            answers = {(s["values"].get("answer") or {}).get("text") for s in history}
            assert {"6260", "5871"} <= answers
            assert client.threads.get(thread_id)["status"] == "idle"

            # 4. A client cannot make the server open a file or folder, and is told why.
            requests = stub.requests[:]
            errors = [
                _run_error(client, {"question": "x?", "tables": ["/etc/passwd"]}, {}),
                _run_error(
                    client, {"question": "x?", "tables": [str(DATA / "lakes_of_turkey.csv")]}, {}
                ),
                _run_error(client, {"question": "x?"}, {"index_dir": str(tmp_path)}),
            ]
            assert errors[0]["error"] == errors[1]["error"] == "GraphRunError", errors
            for error, ref in zip(
                errors[:2], ["/etc/passwd", str(DATA / "lakes_of_turkey.csv")], strict=True
            ):
                assert error["message"].startswith(f"UnknownTableError: unknown table {ref!r}")
                assert "usl_a_league_team_seasons" in error["message"]  # the ids it may use
            assert errors[2]["error"] == "ValueError", errors
            assert (
                "index_dir=" in errors[2]["message"]
                and "TABLERAG_INDEX_DIR" in errors[2]["message"]
            )
            assert stub.requests == requests  # refused before any model call
        print(
            f"\nlanggraph dev: ready in {server.started_in:.1f}s, run {run_seconds:.1f}s, "
            f"stream {stream_seconds:.1f}s, {len(stub.requests)} model requests"
        )
    assert server.proc.returncode != -signal.SIGKILL, server.log_tail()  # SIGINT stopped it
    assert (tmp_path / "studio" / ".langgraph_api").is_dir()


def _run_error(client, run_input: dict, context: dict) -> dict:
    """The error a run on a fresh thread ends with (``{"error", "message"}``)."""
    thread_id = client.threads.create()["thread_id"]
    out = client.runs.wait(thread_id, GRAPH, input=run_input, context=context, raise_error=False)
    assert isinstance(out, dict) and "__error__" in out, out
    return out["__error__"]


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_langgraph_dev_runs_the_embedded_model_offline(tmp_path: Path) -> None:
    """The default configuration (the embedded local model) through Studio's server."""
    table = "lakes_of_turkey"
    env = {"TABLERAG_LLM_CACHE": "false", "TABLERAG_TABLES_DIR": str(DATA)}  # no cache: the model
    with langgraph_dev(tmp_path / "studio", env) as server:
        client = get_sync_client(url=server.url, timeout=900)
        thread = client.threads.create()
        t0 = time.perf_counter()
        out = client.runs.wait(
            thread["thread_id"],
            GRAPH,
            input={"question": "Which lake in Turkey is the deepest?", "tables": [table]},
        )
        seconds = time.perf_counter() - t0
        assert isinstance(out, dict), out
        answer = out["answer"]
        print(
            f"\nembedded model via langgraph dev: ready in {server.started_in:.1f}s, "
            f"run {seconds:.1f}s, answer {answer['text']!r} ({answer['solver']})"
        )
        assert not answer["abstained"], answer
        assert "van" in answer["text"].lower(), answer
        assert answer["cited_cells"]
