"""Conversations whose answers run Python in the real sandbox (needs bubblewrap)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from fake_model import ProgramChatModel, expected_total, numbers_resources, question
from tablerag_agents.graphs import Context

from tablerag_agents.sandbox import Sandbox, SandboxPolicy

pytestmark = pytest.mark.sandbox


def test_many_open_conversations_share_two_sandbox_workers(serve) -> None:
    sandbox = Sandbox(SandboxPolicy(max_workers=2))
    try:
        resources = numbers_resources(ProgramChatModel(sql_fails=True), sandbox=sandbox)
        live = serve(resources, context=Context())  # SQL, then process_df, then ReadTable
        with live.client(timeout=120) as client:
            threads = [client.post("/threads").json()["thread_id"] for _ in range(8)]

            def converse(i: int) -> list[dict]:
                replies = []
                for turn in range(2):
                    response = client.post(
                        f"/threads/{threads[i]}/messages",
                        json={"content": question(10 * i + turn + 1, f"[{i}.{turn}]")},
                    )
                    assert response.status_code == 200, response.text
                    replies.append(response.json()["message"]["answer"])
                return replies

            with ThreadPoolExecutor(8) as pool:
                results = list(pool.map(converse, range(8)))
        for i, replies in enumerate(results):
            for turn, answer in enumerate(replies):
                assert answer["text"] == str(expected_total(10 * i + turn + 1))
                assert answer["solver"] == "process_df"  # SQL failed; Python ran sandboxed
        assert sandbox.stats.sessions == 16  # one session per run, none held per conversation
        assert sandbox.stats.workers_started - sandbox.stats.workers_retired <= 2
    finally:
        sandbox.close()
