"""Load-test the chatbot backend: concurrent multi-turn conversations over loopback HTTP.

The service runs in this process (uvicorn in a thread, real SQLite checkpoints,
the real bubblewrap sandbox with its default pool of 2 workers) with the
deterministic fake model of the server tests, so the figures measure the
service, not an LLM. The fake model's SQL fails, so the graph's default retries
move on to ``process_df`` and every turn runs Python in the sandbox. Each
conversation creates a thread and asks its own questions (turn 2 streamed over
SSE, the others plain JSON); afterwards every thread's history is checked:
exactly its own questions, in order, each followed by the right answer.

    python bench/backend_load.py --conversations 100 --turns 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import uvicorn

ROOT = Path(__file__).resolve().parents[1]
# The fake model lives with the server tests and imports the shared test fakes.
sys.path[:0] = [str(ROOT / "tests" / "server"), str(ROOT / "tests"), str(ROOT / "bench")]

from _results import add_output_args, result_path, save_json  # noqa: E402
from fake_model import ProgramChatModel, expected_total, numbers_table, question  # noqa: E402
from tablerag_agents.graphs import Context, build_graph  # noqa: E402

from tablerag_agents.resources import Resources  # noqa: E402
from tablerag_agents.server import create_app  # noqa: E402
from tablerag_agents.tables import Table  # noqa: E402

STREAMED_TURN = 1
DEFAULT_OUT = ROOT / "bench" / "results" / "backend_load.json"


def start_server(app: Any) -> tuple[uvicorn.Server, threading.Thread, str]:
    """Serve ``app`` on 127.0.0.1 at a free port in a thread; returns its base URL too."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    return server, thread, f"http://127.0.0.1:{port}"


def limit_of(conversation: int, turn: int, turns: int) -> int:
    """A distinct question per (conversation, turn)."""
    return conversation * turns + turn + 1


async def ask(
    client: httpx.AsyncClient, thread_id: str, text: str, stream: bool
) -> tuple[dict[str, Any], float | None]:
    """Send one message; the reply and (streamed) the seconds to the first event."""
    url = f"/threads/{thread_id}/messages"
    if not stream:
        response = await client.post(url, json={"content": text})
        response.raise_for_status()
        return response.json()["message"], None
    started, first, name, reply = time.perf_counter(), None, "", None
    async with client.stream("POST", url, params={"stream": "true"}, json={"content": text}) as r:
        r.raise_for_status()
        async for line in r.aiter_lines():
            first = first if first is not None else time.perf_counter() - started
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:") and name in ("answer", "error"):
                data = json.loads(line[5:])
                if name == "error":
                    raise RuntimeError(f"run failed: {data}")
                reply = data["message"]
    if reply is None:
        raise RuntimeError("the stream ended without an answer")
    return reply, first


async def conversation(
    client: httpx.AsyncClient, index: int, turns: int, records: list[dict[str, Any]]
) -> dict[str, Any]:
    """One conversation: a thread, ``turns`` questions; returns what was asked and answered."""
    created = await client.post("/threads")
    created.raise_for_status()
    thread_id = created.json()["thread_id"]
    asked, wrong = [], 0
    for turn in range(turns):
        limit = limit_of(index, turn, turns)
        text = question(limit, f"[conversation {index}, turn {turn + 1}]")
        started = time.perf_counter()
        error = None
        try:
            reply, first = await ask(client, thread_id, text, stream=turn == STREAMED_TURN)
            wrong += reply["answer"]["text"] != str(expected_total(limit))
        except (httpx.HTTPError, RuntimeError, KeyError) as exc:
            error, first = f"{type(exc).__name__}: {exc}", None
        records.append(
            {
                "conversation": index,
                "turn": turn,
                "seconds": time.perf_counter() - started,
                "first_event_s": first,
                "streamed": turn == STREAMED_TURN,
                "error": error,
            }
        )
        asked.append((text, limit))
    return {"thread_id": thread_id, "asked": asked, "wrong_answers": wrong}


async def audit(client: httpx.AsyncClient, convo: dict[str, Any]) -> tuple[int, int]:
    """(lost, mixed-up) messages of one thread, from its stored history."""
    response = await client.get(f"/threads/{convo['thread_id']}/messages")
    messages = response.json()["messages"]
    expected = []
    for text, limit in convo["asked"]:
        expected += [("user", text, None), ("assistant", None, str(expected_total(limit)))]
    lost = max(len(expected) - len(messages), 0)
    mixed = 0
    for (role, text, answer), got in zip(expected, messages, strict=False):
        if got["role"] != role or (text is not None and got["content"] != text):
            mixed += 1
        elif answer is not None and (got.get("answer") or {}).get("text") != answer:
            mixed += 1
    return lost, mixed + max(len(messages) - len(expected), 0)


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) by the nearest-rank method."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


async def run_load(url: str, conversations: int, turns: int) -> dict[str, Any]:
    """Run the conversations concurrently and audit every thread afterwards."""
    records: list[dict[str, Any]] = []
    limits = httpx.Limits(max_connections=conversations + 10, max_keepalive_connections=0)
    async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as client:
        started = time.perf_counter()
        results = await asyncio.gather(
            *(conversation(client, i, turns, records) for i in range(conversations)),
            return_exceptions=True,
        )
        total = time.perf_counter() - started
        convos = [r for r in results if isinstance(r, dict)]
        audits = [await audit(client, c) for c in convos]
    ok = [r["seconds"] for r in records if r["error"] is None]
    per_turn = {
        str(t + 1): {
            "p50_s": round(percentile(s, 0.5), 3),
            "p95_s": round(percentile(s, 0.95), 3),
        }
        for t in range(turns)
        if (s := [r["seconds"] for r in records if r["turn"] == t and r["error"] is None])
    }
    firsts = [r["first_event_s"] for r in records if r["first_event_s"] is not None]
    return {
        "conversations": conversations,
        "turns_per_conversation": turns,
        "turns_sent": len(records),
        "errors": sum(r["error"] is not None for r in records)
        + sum(not isinstance(r, dict) for r in results),
        "error_samples": [r["error"] for r in records if r["error"]][:5],
        "wrong_answers": sum(c["wrong_answers"] for c in convos),
        "lost_messages": sum(lost for lost, _ in audits),
        "mixed_up_messages": sum(mixed for _, mixed in audits),
        "latency_p50_s": round(percentile(ok, 0.5), 3) if ok else None,
        "latency_p95_s": round(percentile(ok, 0.95), 3) if ok else None,
        "latency_max_s": round(max(ok), 3) if ok else None,
        "latency_mean_s": round(statistics.mean(ok), 3) if ok else None,
        "latency_by_turn": per_turn,
        "streamed_first_event_p50_s": round(percentile(firsts, 0.5), 3) if firsts else None,
        "total_s": round(total, 2),
        "turns_per_s": round(len(ok) / total, 2),
    }


def baselines(resources: Resources, url: str, n: int = 10) -> dict[str, float]:
    """Unloaded p50 seconds of one turn: the graph in-process, and over HTTP."""
    graph = build_graph(resources)
    direct = []
    for i in range(n):
        started = time.perf_counter()
        graph.invoke({"question": question(i + 1)}, context=Context())
        direct.append(time.perf_counter() - started)
    over_http = []
    with httpx.Client(base_url=url, timeout=120) as client:
        thread_id = client.post("/threads").json()["thread_id"]
        for i in range(n):
            started = time.perf_counter()
            client.post(f"/threads/{thread_id}/messages", json={"content": question(i + 1)})
            over_http.append(time.perf_counter() - started)
    return {
        "unloaded_turn_in_process_p50_s": round(statistics.median(direct), 3),
        "unloaded_turn_over_http_p50_s": round(statistics.median(over_http), 3),
    }


def main() -> None:
    """Parse arguments, serve, load, audit, print and save the JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=100)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--model-delay", type=float, default=0.0, help="Seconds per model call.")
    add_output_args(parser, DEFAULT_OUT)
    args = parser.parse_args()
    out = result_path(DEFAULT_OUT, args.out, force=args.force)
    rows = max(300, args.conversations * args.turns)
    load_before = [round(x, 2) for x in os.getloadavg()]
    model = ProgramChatModel(sql_fails=True, delay_s=args.model_delay)
    with tempfile.TemporaryDirectory() as tmp, Resources(chat_model=model) as resources:
        resources.add_table(Table("numbers", numbers_table(rows), caption="numbers"))
        sandbox = resources.sandbox  # the real bubblewrap pool (started before the clock)
        app = create_app(resources, db_path=Path(tmp) / "threads.sqlite", context=Context())
        server, thread, url = start_server(app)
        try:
            unloaded = baselines(resources, url)
            report = asyncio.run(run_load(url, args.conversations, args.turns))
        finally:
            server.should_exit = True
            thread.join(timeout=60)
        report.update(
            {
                **unloaded,
                "cpus": os.cpu_count(),
                "load_avg_before": load_before,
                "solver": "default retries (SQL fails, then process_df in the sandbox)",
                "model_delay_s": args.model_delay,
                "sandbox_max_workers": sandbox.policy.max_workers,
                "sandbox_sessions": sandbox.stats.sessions,  # baselines included
                "sandbox_workers_started": sandbox.stats.workers_started,
                "model_calls": model.calls,
            }
        )
    print(json.dumps(report, indent=2))
    save_json(out, report)
    print(f"saved {out}")


if __name__ == "__main__":
    main()
