"""Host side of one bounded worker process: start it, run tasks under limits, kill it.

The process is started with :mod:`subprocess` (the host is never forked) and
talks over a private socketpair in frames of JSON plus an Arrow blob
(:mod:`tablerag_agents.sandbox.protocol`, never pickle). The host enforces the
wall clock: past it the worker is killed (its process group, by id). A worker
killed by the kernel for CPU time (``SIGXCPU``) or that reports a failed
allocation is reported as that limit.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tablerag_agents.bounded.limits import WorkerLimits
from tablerag_agents.errors import WorkerError, WorkerLimitError
from tablerag_agents.sandbox.process import FrameChannel, WorkerDied, WorkerTimeout, kill_group

logger = logging.getLogger(__name__)

_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
#: Environment of a worker: no HOME or user variables, one thread per library,
#: glibc's and Arrow's system allocators (their per-thread arenas and mimalloc's
#: reservations would otherwise fill the address-space limit).
_WORKER_ENV = {
    "PATH": "/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "MALLOC_ARENA_MAX": "2",
    "ARROW_DEFAULT_MEMORY_POOL": "system",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
}


def _worker_env() -> dict[str, str]:
    env = dict(_WORKER_ENV)
    paths = [_PACKAGE_ROOT, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


class BoundedWorker:
    """One worker process and its channel; used by one thread at a time (via a lease).

    Attributes:
        keys: What the worker's tasks keep between calls (e.g. the SQL sessions whose
            tables it holds), maintained by the callers.
        base_vm: The worker's address space when it became ready.
    """

    def __init__(self, preload: Sequence[str], max_result_bytes: int, start_timeout: float):
        """Start the process and wait for its hello."""
        host_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        config = {"fd": child_end.fileno(), "preload": list(preload)}
        try:
            self.proc = subprocess.Popen(  # noqa: S603 - fixed argv, no shell
                [sys.executable, "-m", "tablerag_agents.bounded.worker", json.dumps(config)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env=_worker_env(),
                pass_fds=(child_end.fileno(),),
                start_new_session=True,
            )
        except OSError as exc:
            host_end.close()
            raise WorkerError(f"cannot start a bounded worker: {exc}") from exc
        finally:
            child_end.close()
        self.channel = FrameChannel(host_end, max_result_bytes)
        self.keys: set[str] = set()
        self.leased_at = 0.0
        self.retire = False
        self.calls = 0
        try:
            hello, _ = self.channel.recv(time.monotonic() + start_timeout)
        except (WorkerTimeout, WorkerDied) as exc:
            detail = self._stderr()
            self.kill()
            raise WorkerError(f"the bounded worker did not start: {exc}; {detail}") from exc
        if self.proc.stderr is not None:
            self.proc.stderr.close()  # the worker sent stderr to /dev/null after its hello
        self.pid = int(hello.get("pid", self.proc.pid))
        self.base_vm = int(hello.get("status", {}).get("VmSize", 0))
        self.status: dict[str, int] = dict(hello.get("status", {}))

    @property
    def alive(self) -> bool:
        """Whether the process is still running."""
        return self.proc.poll() is None

    def _stderr(self) -> str:
        try:
            out = self.proc.communicate(timeout=2)[1] or b""
        except (subprocess.TimeoutExpired, ValueError, OSError):
            return ""
        return out.decode(errors="replace").strip()[-2000:]

    def call(
        self, task: str, args: dict[str, Any], limits: WorkerLimits, blob: bytes = b""
    ) -> tuple[dict[str, Any], bytes]:
        """Run ``task`` in the worker under ``limits``.

        Returns:
            The worker's reply (``ok``, then ``result`` or the error fields) and its blob.

        Raises:
            WorkerLimitError: Memory (a failed allocation; the worker is retired after
                the lease), CPU time or wall clock (the worker is killed) exceeded.
            WorkerError: The worker died or broke the protocol (it is killed).
        """
        if not self.alive:
            raise WorkerError("the bounded worker is not running")
        self.calls += 1
        deadline = time.monotonic() + limits.wall_seconds
        request = {
            "op": "task",
            "task": task,
            "args": args,
            "limits": {"memory": limits.memory_bytes, "cpu": limits.cpu_seconds},
        }
        try:
            self.channel.send(request, blob, deadline)
            reply, out = self.channel.recv(deadline)
        except WorkerTimeout:
            self.kill()
            raise WorkerLimitError("wall clock", limits.describe("wall clock")) from None
        except WorkerDied as exc:
            raise self._death(limits, exc) from None
        self.status = dict(reply.get("status") or {})
        if reply.get("retire"):
            self.retire = True
        if reply.get("memory"):
            raise WorkerLimitError(
                "memory", limits.describe("memory"), str(reply.get("error", ""))[:300]
            )
        return reply, out

    def _death(self, limits: WorkerLimits, exc: Exception) -> Exception:
        """The error for a worker that died during a task (then reaped)."""
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        self.kill()
        if code == -signal.SIGXCPU:
            return WorkerLimitError("CPU time", limits.describe("CPU time"))
        if code is not None and code < 0:
            name = signal.Signals(-code).name
            if limits.memory_bytes is not None and -code in (signal.SIGABRT, signal.SIGSEGV):
                # C++ code that cannot allocate aborts instead of raising.
                return WorkerLimitError(
                    "memory", limits.describe("memory"), f"the worker died with {name}"
                )
            return WorkerError(f"the bounded worker died with {name}")
        return WorkerError(f"the bounded worker failed: {exc} (exit code {code})")

    def kill(self) -> None:
        """Kill the worker's process group (it has its own session) and reap it."""
        kill_group(self.proc, "bounded worker")
        self.channel.close()
        if self.proc.stderr is not None and not self.proc.stderr.closed:
            self.proc.stderr.close()
