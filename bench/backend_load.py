"""Load-test the chatbot backend: concurrent multi-turn conversations over loopback HTTP.

The service runs in this process (uvicorn in a thread, real SQLite checkpoints,
the real bubblewrap sandbox with its default pool of 2 workers) with the
deterministic fake model of the server tests, so the figures measure the
service, not an LLM. The fake model's SQL fails, so the graph's default retries
move on to ``process_df`` and every turn runs Python in the sandbox. Each
conversation creates a thread and asks its own questions (turn 2 streamed over
SSE, the others plain JSON); afterwards every thread's history is checked:
exactly its own questions, in order, each followed by the right answer.

With ``--replicas N`` the service runs as N processes (each its own uvicorn,
sandbox pool and fake model) sharing one PostgreSQL database (``--db URL``, or a
throwaway cluster started from Debian's ``postgresql`` binaries), and the
turns of every conversation go to the replicas in turn, so each conversation's
history must survive crossing replicas. A client refused with 503 (the
server's ``--max-runs``) waits ``Retry-After`` and sends again, as a client should.

    python bench/backend_load.py --conversations 100 --turns 3
    python bench/backend_load.py --conversations 100 --turns 3 --replicas 2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import AsyncExitStack, ExitStack
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


class Busy:
    """Counts the 503 refusals clients waited out."""

    refusals = 0


async def _wait_if_busy(response: httpx.Response) -> bool:
    """True (after waiting ``Retry-After``) when the server refused for being full."""
    if response.status_code != 503 or "retry-after" not in response.headers:
        return False
    Busy.refusals += 1
    await asyncio.sleep(float(response.headers["retry-after"]))
    return True


async def ask(
    client: httpx.AsyncClient, thread_id: str, text: str, stream: bool
) -> tuple[dict[str, Any], float | None]:
    """Send one message; the reply and (streamed) the seconds to the first event."""
    url = f"/threads/{thread_id}/messages"
    if not stream:
        while await _wait_if_busy(response := await client.post(url, json={"content": text})):
            pass
        response.raise_for_status()
        return response.json()["message"], None
    while True:
        started, first, name, reply = time.perf_counter(), None, "", None
        request = client.build_request(
            "POST", url, params={"stream": "true"}, json={"content": text}
        )
        r = await client.send(request, stream=True)
        try:
            if r.status_code == 503:
                await r.aread()
                if await _wait_if_busy(r):
                    continue
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
        finally:
            await r.aclose()
        if reply is None:
            raise RuntimeError("the stream ended without an answer")
        return reply, first


async def conversation(
    clients: list[httpx.AsyncClient], index: int, turns: int, records: list[dict[str, Any]]
) -> dict[str, Any]:
    """One conversation: a thread, ``turns`` questions; returns what was asked and answered.

    With several replicas, each turn goes to the next replica after the previous turn's.
    """
    created = await clients[index % len(clients)].post("/threads")
    created.raise_for_status()
    thread_id = created.json()["thread_id"]
    asked, wrong = [], 0
    for turn in range(turns):
        client = clients[(index + turn + 1) % len(clients)]
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
    return {"thread_id": thread_id, "asked": asked, "wrong_answers": wrong, "index": index}


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


async def run_load(urls: list[str], conversations: int, turns: int) -> dict[str, Any]:
    """Run the conversations concurrently and audit every thread afterwards."""
    records: list[dict[str, Any]] = []
    limits = httpx.Limits(max_connections=conversations + 10, max_keepalive_connections=0)
    Busy.refusals = 0
    async with AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                httpx.AsyncClient(base_url=url, timeout=600, limits=limits)
            )
            for url in urls
        ]
        started = time.perf_counter()
        results = await asyncio.gather(
            *(conversation(clients, i, turns, records) for i in range(conversations)),
            return_exceptions=True,
        )
        total = time.perf_counter() - started
        convos = [r for r in results if isinstance(r, dict)]
        # Read each history from a replica other than the one that answered its last turn.
        audits = [await audit(clients[(c["index"] + turns + 2) % len(clients)], c) for c in convos]
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
        "busy_refusals_waited_out": Busy.refusals,
        "latency_p50_s": round(percentile(ok, 0.5), 3) if ok else None,
        "latency_p95_s": round(percentile(ok, 0.95), 3) if ok else None,
        "latency_max_s": round(max(ok), 3) if ok else None,
        "latency_mean_s": round(statistics.mean(ok), 3) if ok else None,
        "latency_by_turn": per_turn,
        "streamed_first_event_p50_s": round(percentile(firsts, 0.5), 3) if firsts else None,
        "total_s": round(total, 2),
        "turns_per_s": round(len(ok) / total, 2),
    }


def in_process_baseline(resources: Resources, n: int = 10) -> float:
    """Unloaded p50 seconds of one turn, the graph in-process."""
    graph = build_graph(resources)
    direct = []
    for i in range(n):
        started = time.perf_counter()
        graph.invoke({"question": question(i + 1)}, context=Context())
        direct.append(time.perf_counter() - started)
    return round(statistics.median(direct), 3)


def http_baseline(url: str, n: int = 10) -> float:
    """Unloaded p50 seconds of one turn over HTTP."""
    over_http = []
    with httpx.Client(base_url=url, timeout=120) as client:
        thread_id = client.post("/threads").json()["thread_id"]
        for i in range(n):
            started = time.perf_counter()
            client.post(f"/threads/{thread_id}/messages", json={"content": question(i + 1)})
            over_http.append(time.perf_counter() - started)
    return round(statistics.median(over_http), 3)


def serve_replica(db: str, rows: int, model_delay: float, max_runs: int) -> None:
    """A replica process: serve on a free port, print its URL, then its stats when stopped."""
    model = ProgramChatModel(sql_fails=True, delay_s=model_delay)
    with tempfile.TemporaryDirectory() as tmp, Resources(chat_model=model) as resources:
        resources.add_table(Table("numbers", numbers_table(rows), caption="numbers"))
        sandbox = resources.sandbox
        app = create_app(
            resources, db_path=db, upload_dir=Path(tmp), context=Context(), max_runs=max_runs
        )
        server, thread, url = start_server(app)
        print(json.dumps({"url": url}), flush=True)
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        stop.wait()
        server.should_exit = True
        thread.join(timeout=60)
        stats = {
            "model_calls": model.calls,
            "sandbox_sessions": sandbox.stats.sessions,
            "sandbox_workers_started": sandbox.stats.workers_started,
        }
        print(json.dumps({"stats": stats}), flush=True)


def start_replicas(
    n: int, db: str, rows: int, model_delay: float, max_runs: int
) -> list[subprocess.Popen[str]]:
    """Start ``n`` replica processes of this script; wait until each prints its URL."""
    procs = []
    for _ in range(n):
        command = [sys.executable, __file__, "--serve-replica", "--db", db, "--rows", str(rows)]
        command += ["--model-delay", str(model_delay), "--max-runs", str(max_runs)]
        procs.append(subprocess.Popen(command, stdout=subprocess.PIPE, text=True))
    return procs


def replica_url(proc: subprocess.Popen[str]) -> str:
    """The URL a replica process printed (it fails if the process ended instead)."""
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError(f"a replica did not start (exit {proc.wait()})")
    return str(json.loads(line)["url"])


def stop_replica(proc: subprocess.Popen[str]) -> dict[str, Any]:
    """Stop a replica process; the stats it printed."""
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=120)
    for line in out.splitlines():
        if line.startswith("{") and "stats" in line:
            return dict(json.loads(line)["stats"])
    return {}


def main() -> None:
    """Parse arguments, serve, load, audit, print and save the JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=100)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--model-delay", type=float, default=0.0, help="Seconds per model call.")
    parser.add_argument(
        "--replicas",
        type=int,
        default=1,
        help="Serve from this many processes sharing one PostgreSQL database (turns alternate).",
    )
    parser.add_argument(
        "--db",
        default=None,
        help="postgresql:// URL for the threads (default: a SQLite file in a temp folder; "
        "with --replicas > 1 a throwaway PostgreSQL cluster).",
    )
    parser.add_argument(
        "--max-runs",
        type=int,
        default=None,
        help="The server's --max-runs (default: conversations).",
    )
    parser.add_argument("--serve-replica", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rows", type=int, default=None, help=argparse.SUPPRESS)
    add_output_args(parser, DEFAULT_OUT)
    args = parser.parse_args()
    rows = args.rows or max(300, args.conversations * args.turns)
    max_runs = args.max_runs or args.conversations
    if args.serve_replica:
        serve_replica(args.db, rows, args.model_delay, max_runs)
        return
    out = result_path(DEFAULT_OUT, args.out, force=args.force)
    load_before = [round(x, 2) for x in os.getloadavg()]
    if args.replicas > 1 or args.db:
        report = run_replicas(args, rows, max_runs)
    else:
        report = run_in_process(args, rows, max_runs)
    report = {**report, "cpus": os.cpu_count(), "load_avg_before": load_before}
    print(json.dumps(report, indent=2))
    save_json(out, report)
    print(f"saved {out}")


def run_in_process(args: argparse.Namespace, rows: int, max_runs: int) -> dict[str, Any]:
    """One server in this process on a SQLite file."""
    model = ProgramChatModel(sql_fails=True, delay_s=args.model_delay)
    with tempfile.TemporaryDirectory() as tmp, Resources(chat_model=model) as resources:
        resources.add_table(Table("numbers", numbers_table(rows), caption="numbers"))
        sandbox = resources.sandbox  # the real bubblewrap pool (started before the clock)
        app = create_app(
            resources, db_path=Path(tmp) / "threads.sqlite", context=Context(), max_runs=max_runs
        )
        server, thread, url = start_server(app)
        try:
            unloaded = {
                "unloaded_turn_in_process_p50_s": in_process_baseline(resources),
                "unloaded_turn_over_http_p50_s": http_baseline(url),
            }
            report = asyncio.run(run_load([url], args.conversations, args.turns))
        finally:
            server.should_exit = True
            thread.join(timeout=60)
        return {
            **report,
            **unloaded,
            "replicas": 1,
            "database": "sqlite",
            "max_runs": max_runs,
            "solver": "default retries (SQL fails, then process_df in the sandbox)",
            "model_delay_s": args.model_delay,
            "sandbox_max_workers": sandbox.policy.max_workers,
            "sandbox_sessions": sandbox.stats.sessions,  # baselines included
            "sandbox_workers_started": sandbox.stats.workers_started,
            "model_calls": model.calls,
        }


def run_replicas(args: argparse.Namespace, rows: int, max_runs: int) -> dict[str, Any]:
    """``--replicas`` server processes on one PostgreSQL database."""
    with ExitStack() as stack:
        db = args.db
        if db is None:
            from pg_cluster import PostgresCluster, require_postgres

            cluster = PostgresCluster(require_postgres()).start()
            stack.callback(cluster.stop)
            db = cluster.create_database()
        procs = start_replicas(args.replicas, db, rows, args.model_delay, max_runs)
        stats: list[dict[str, Any]] = []
        try:
            urls = [replica_url(proc) for proc in procs]
            unloaded = {"unloaded_turn_over_http_p50_s": http_baseline(urls[0])}
            report = asyncio.run(run_load(urls, args.conversations, args.turns))
        finally:
            stats = [stop_replica(proc) for proc in procs]
    return {
        **report,
        **unloaded,
        "replicas": args.replicas,
        "database": "postgres",
        "max_runs_per_replica": max_runs,
        "turns_routed": "each turn to the next replica; histories read from yet another",
        "solver": "default retries (SQL fails, then process_df in the sandbox)",
        "model_delay_s": args.model_delay,
        "replica_stats": stats,
    }


if __name__ == "__main__":
    main()
