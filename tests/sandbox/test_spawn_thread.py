"""Workers outlive the thread that needed them (bwrap's --die-with-parent is per thread)."""

from __future__ import annotations

import threading
import time

import pytest

from tablerag_agents.sandbox import Sandbox, SandboxPolicy

pytestmark = pytest.mark.sandbox


def test_worker_started_from_a_finished_thread_keeps_serving() -> None:
    with Sandbox(SandboxPolicy(max_workers=1, prewarm=False)) as sb:
        # An agent framework runs a tool in a short-lived executor thread.
        thread = threading.Thread(target=lambda: sb.run("1"))
        thread.start()
        thread.join()
        time.sleep(0.3)  # a parent-death SIGKILL would have landed by now
        with sb._cond:
            idle = list(sb._idle)
        assert len(idle) == 1 and idle[0].alive
        assert sb.run("40 + 2").value == 42
        assert sb.stats.workers_started == 1
