"""The host-side :class:`Sandbox`: checks bubblewrap once, then runs a pool of warm workers."""

from __future__ import annotations

import logging
import os
import platform
import socket
import threading
import time
import weakref
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pandas as pd

from ..errors import SandboxError, SandboxUnavailableError
from . import bwrap, seccomp
from .policy import MIB, SandboxPolicy
from .process import WorkerDied, WorkerProcess, WorkerTimeout
from .result import ExecResult
from .session import Session

logger = logging.getLogger(__name__)


@dataclass
class SandboxStats:
    """Counters for monitoring and tests."""

    workers_started: int = 0
    workers_retired: int = 0
    sessions: int = 0
    runs: int = 0
    timeouts: int = 0
    crashes: int = 0


def _kill_all(workers: set[WorkerProcess], spawner: ThreadPoolExecutor) -> None:
    for worker in list(workers):
        worker.kill()
    workers.clear()
    spawner.shutdown(wait=False)


class Sandbox:
    """Run model-written Python over DataFrames in bubblewrap jails, fast.

    Each worker is a bubblewrap sandbox (no network, read-only system, private
    ``/tmp``, unprivileged uid, rlimits, seccomp) holding a zygote that has
    already imported pandas. Every session, and every one-shot :meth:`run`, gets
    a freshly forked process and namespace; afterwards the zygote kills every
    leftover process and empties ``/tmp``. Workers are replaced after a crash,
    a hard timeout, or ``policy.max_runs_per_worker`` runs.

    Inside, the tables are variables named by their keys, ``pd`` and ``np`` are
    imported, ``_`` holds the last value, and the working directory is ``/tmp``.
    Thread-safe: concurrent sessions use up to ``policy.max_workers`` sandboxes.

    Raises:
        SandboxUnavailableError: bubblewrap is missing or cannot create the
            sandbox here. There is no unsandboxed fallback.
    """

    def __init__(self, policy: SandboxPolicy | None = None) -> None:
        self.policy = policy or SandboxPolicy()
        self.stats = SandboxStats()
        self._bwrap = bwrap.resolve_bwrap(self.policy)
        self._paths = bwrap.RuntimePaths.detect()
        self._drop_uid = os.geteuid() == 0
        if self._drop_uid and self._paths.setpriv is None:
            raise SandboxUnavailableError(
                "running as root needs `setpriv` (util-linux) to drop to an unprivileged uid"
            )
        self._filter: bytes | None = None
        if self.policy.seccomp and seccomp.supported():
            self._filter = seccomp.build_filter()
        elif self.policy.seccomp:
            logger.warning(
                "no seccomp table for %s: every worker will serve a single session",
                platform.machine(),
            )
        self._config = bwrap.worker_config(self.policy, self._paths)
        self._cond = threading.Condition()
        self._idle: list[WorkerProcess] = []
        self._all: set[WorkerProcess] = set()
        self._closed = False
        self._spawner = ThreadPoolExecutor(1, thread_name_prefix="tablerag-sandbox-spawner")
        self._finalizer = weakref.finalize(self, _kill_all, self._all, self._spawner)
        self._probe()
        if self.policy.prewarm:
            with self._cond:
                self._idle.append(self._spawn())

    # -- public API -------------------------------------------------------------------

    def run(
        self,
        code: str,
        tables: Mapping[str, pd.DataFrame] | None = None,
        timeout: float | None = None,
    ) -> ExecResult:
        """Run ``code`` once in a fresh namespace holding ``tables`` as variables."""
        with self.session(tables or {}) as session:
            return session.run(code, timeout=timeout)

    def session(self, tables: Mapping[str, pd.DataFrame] | None = None) -> Session:
        """Open a session: one namespace kept across runs, tables sent once."""
        if self._closed:
            raise SandboxError("the sandbox is closed")
        return Session(self, dict(tables or {}))

    def close(self) -> None:
        """Kill every worker. Open sessions fail on their next run."""
        with self._cond:
            self._closed = True
            self._idle.clear()
            self._cond.notify_all()
        self._finalizer()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- worker pool (used by Session) ------------------------------------------------

    def _command(self, argv: list[str], seccomp_fd: int | None) -> list[str]:
        uid = bwrap.pick_uid(self.policy) if self._drop_uid else None
        return bwrap.build_command(
            self._bwrap, self.policy, self._paths, uid=uid, seccomp_fd=seccomp_fd, argv=argv
        )

    def _with_filter_fd(self) -> int | None:
        if self._filter is None:
            return None
        fd = os.memfd_create("tablerag-seccomp")  # handed to bwrap via pass_fds
        os.write(fd, self._filter)
        os.lseek(fd, 0, os.SEEK_SET)
        return fd

    def _probe(self) -> None:
        fd = self._with_filter_fd()
        try:
            bwrap.probe(self._command([], fd), self._paths.python, (fd,) if fd is not None else ())
        finally:
            if fd is not None:
                os.close(fd)

    def _spawn(self) -> WorkerProcess:
        # bwrap's --die-with-parent fires when the *thread* that started it exits, so
        # workers are started from one long-lived thread, never from a caller's
        # (e.g. an executor thread of one agent run) that may end while they serve.
        return self._spawner.submit(self._spawn_here).result()

    def _spawn_here(self) -> WorkerProcess:
        host_ctrl, child_ctrl = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        fd = self._with_filter_fd()
        try:
            config = dict(self._config, ctrl_fd=child_ctrl.fileno())
            cmd = self._command(bwrap.python_argv(self._paths, config), fd)
            fds = (child_ctrl.fileno(),) + ((fd,) if fd is not None else ())
            worker = WorkerProcess(cmd, host_ctrl, fds, self._max_blob())
        except BaseException:
            host_ctrl.close()
            raise
        finally:
            child_ctrl.close()
            if fd is not None:
                os.close(fd)
        self._all.add(worker)
        self.stats.workers_started += 1
        return worker

    def _max_blob(self) -> int:
        return self.policy.max_result_bytes + MIB

    def _acquire(self) -> WorkerProcess:
        """Lease a ready worker for one session (waits if all are busy)."""
        deadline = time.monotonic() + self.policy.acquire_timeout_s
        for _attempt in range(3):
            with self._cond:
                worker = self._take_or_spawn(deadline)
            try:
                worker.wait_ready(self.policy.startup_timeout_s)
                self._verify(worker)
                worker.settle(timeout=10.0)
                return worker
            except (WorkerDied, WorkerTimeout) as exc:
                logger.warning("discarding a broken idle worker: %s", exc)
                self._discard(worker)
            except SandboxError:
                self._discard(worker)
                raise
        raise SandboxError("could not obtain a working sandbox worker after 3 attempts")

    def _verify(self, worker: WorkerProcess) -> None:
        """Refuse a worker whose process is not as confined as configured (fail closed)."""
        status = (worker.hello or {}).get("status", {})
        problems = []
        if status.get("NoNewPrivs") != "1":
            problems.append("no_new_privs is off")
        if int(status.get("CapEff", "1"), 16) != 0:
            problems.append(f"capabilities {status.get('CapEff')} are set")
        if self._filter is not None and status.get("Seccomp") != "2":
            problems.append("the seccomp filter is not active")
        if self._drop_uid and str(status.get("Uid", "0")).split()[0] == "0":
            problems.append("the code would run as root")
        if problems:
            self._discard(worker)
            raise SandboxUnavailableError(f"sandbox worker is not confined: {', '.join(problems)}")

    def _take_or_spawn(self, deadline: float) -> WorkerProcess:
        while True:
            if self._closed:
                raise SandboxError("the sandbox is closed")
            while self._idle:
                worker = self._idle.pop()
                if worker.alive:
                    return worker
                self._retire_locked(worker)
            if len(self._all) < self.policy.max_workers:
                return self._spawn()
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._cond.wait(remaining):
                raise SandboxError(
                    f"all {self.policy.max_workers} sandbox workers are busy; close idle "
                    "sessions or raise SandboxPolicy.max_workers"
                )

    def _release(self, worker: WorkerProcess, reusable: bool) -> None:
        """Return a worker after a session; replace it when it is spent."""
        with self._cond:
            single_session = self._filter is None
            spent = worker.runs >= self.policy.max_runs_per_worker or single_session
            if reusable and not spent and not self._closed and worker.alive:
                self._idle.append(worker)
            else:
                self._retire_locked(worker)
            self._cond.notify()

    def _discard(self, worker: WorkerProcess) -> None:
        with self._cond:
            self._retire_locked(worker)
            self._cond.notify()

    def _retire_locked(self, worker: WorkerProcess) -> None:
        worker.kill()
        if worker in self._all:
            self._all.discard(worker)
            self.stats.workers_retired += 1
        if self.policy.prewarm and not self._closed and not self._idle:
            if len(self._all) < self.policy.max_workers:
                self._idle.append(self._spawn())
