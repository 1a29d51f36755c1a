"""A thread-safe pool of warm bounded worker processes, and the process-wide default.

Each worker (:class:`~tablerag_agents.bounded.process.BoundedWorker`) is a
separate Python process that has already imported pandas. A caller leases one
worker for a task (or a few), so a task that hangs holds only its own worker
while other threads use the others; a worker killed at a limit is replaced on
the next lease.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from tablerag_agents.bounded.limits import MIB, WorkerLimits
from tablerag_agents.bounded.process import BoundedWorker
from tablerag_agents.errors import WorkerError

logger = logging.getLogger(__name__)


class WorkerPool:
    """A thread-safe pool of bounded workers, started on demand and kept warm.

    Args:
        max_workers: Workers running at once; a caller waits (up to
            ``acquire_timeout``) when all are leased.
        max_idle: Warm workers kept between leases; the others are stopped.
        preload: Task modules every worker imports before it is ready.
        max_result_bytes: Largest blob a worker may send back.
        start_timeout: Seconds a new worker may take to import its libraries.
        acquire_timeout: Seconds a caller waits for a free worker.
        retire_growth_bytes: A worker whose address space grew by more than this
            since it started is replaced (memory kept by an allocator after a big task).
        max_calls: Calls after which a worker is replaced.
        spawn_after: Seconds a caller waits for a leased worker before starting
            another (so a hung task delays others by at most this).
    """

    def __init__(
        self,
        *,
        max_workers: int = 4,
        max_idle: int = 1,
        preload: Sequence[str] = (),
        max_result_bytes: int = 2**32 - 1,
        start_timeout: float = 60.0,
        acquire_timeout: float = 300.0,
        retire_growth_bytes: int = 1024 * MIB,
        max_calls: int = 5000,
        spawn_after: float = 0.25,
    ) -> None:
        """Create an empty pool; workers start when first leased."""
        if max_workers < 1:
            raise ValueError(f"max_workers must be >= 1, got {max_workers}")
        self.max_workers = max_workers
        self.max_idle = max_idle
        self.preload = tuple(preload)
        self.max_result_bytes = max_result_bytes
        self.start_timeout = start_timeout
        self.acquire_timeout = acquire_timeout
        self.retire_growth_bytes = retire_growth_bytes
        self.max_calls = max_calls
        self.spawn_after = spawn_after
        self.started = 0
        self._cond = threading.Condition()
        self._idle: list[BoundedWorker] = []
        self._leased: set[BoundedWorker] = set()
        self._starting = 0
        self._closed = False
        self._pid = os.getpid()

    @contextmanager
    def lease(self, prefer: str | None = None) -> Iterator[BoundedWorker]:
        """Hold one worker for a few calls (an idle one whose ``keys`` hold ``prefer`` first)."""
        worker = self._acquire(prefer)
        try:
            yield worker
        finally:
            self._release(worker)

    def call(
        self, task: str, args: dict[str, Any], limits: WorkerLimits, blob: bytes = b""
    ) -> tuple[dict[str, Any], bytes]:
        """Run one task on any free worker (see :meth:`BoundedWorker.call`)."""
        with self.lease() as worker:
            return worker.call(task, args, limits, blob)

    def prewarm(self) -> None:
        """Start a worker in the background unless one is idle or starting already."""
        with self._cond:
            busy = len(self._leased) + self._starting
            if self._closed or self._idle or self._starting or busy >= self.max_workers:
                return
            self._starting += 1
        threading.Thread(target=self._start_idle, name="bounded-prewarm", daemon=True).start()

    def _start_idle(self) -> None:
        try:
            self._started(self._start(), idle=True)
        except WorkerError as exc:
            logger.warning("could not prewarm a bounded worker: %s", exc)

    def _start(self) -> BoundedWorker:
        """Start a worker (``_starting`` was counted by the caller)."""
        try:
            return BoundedWorker(self.preload, self.max_result_bytes, self.start_timeout)
        except BaseException:
            with self._cond:
                self._starting -= 1
                self._cond.notify_all()
            raise

    def _started(self, worker: BoundedWorker, *, idle: bool) -> None:
        with self._cond:
            self._starting -= 1
            self.started += 1
            closed = self._closed
            if not closed:
                if idle:
                    self._idle.append(worker)
                else:
                    self._lease(worker)
            self._cond.notify_all()
        if closed:
            worker.kill()
            raise WorkerError("the bounded worker pool is closed")

    def _acquire(self, prefer: str | None) -> BoundedWorker:
        """An idle worker, else a new one; while one is starting, or one was leased less
        than ``spawn_after`` seconds ago, wait for it (a task usually takes milliseconds,
        a start seconds)."""
        deadline = time.monotonic() + self.acquire_timeout
        with self._cond:
            while True:
                if self._closed:
                    raise WorkerError("the bounded worker pool is closed")
                while self._idle and not self._idle[-1].alive:
                    self._idle.pop().kill()
                if self._idle:
                    match = [w for w in self._idle if prefer is not None and prefer in w.keys]
                    worker = match[-1] if match else self._idle[-1]
                    self._idle.remove(worker)
                    self._lease(worker)
                    return worker
                now = time.monotonic()
                room = len(self._leased) + self._starting < self.max_workers
                # The latest lease may end soon; after spawn_after, assume it hangs.
                spawn_at = max((w.leased_at for w in self._leased), default=0.0)
                spawn_at += self.spawn_after
                if room and not self._starting and now >= spawn_at:
                    self._starting += 1
                    break
                if now >= deadline:
                    raise WorkerError(
                        f"all {self.max_workers} bounded workers stayed busy for "
                        f"{self.acquire_timeout:g} s"
                    )
                wake = deadline if self._starting or not room else min(spawn_at, deadline)
                self._cond.wait(max(wake - now, 0.001))
        worker = self._start()
        self._started(worker, idle=False)
        return worker

    def _lease(self, worker: BoundedWorker) -> None:
        worker.leased_at = time.monotonic()
        self._leased.add(worker)

    def _release(self, worker: BoundedWorker) -> None:
        grown = worker.status.get("VmSize", 0) - worker.base_vm
        keep = (
            worker.alive
            and not worker.retire
            and grown <= self.retire_growth_bytes
            and worker.calls < self.max_calls
        )
        with self._cond:
            self._leased.discard(worker)
            keep = keep and not self._closed and len(self._idle) < self.max_idle
            if keep:
                self._idle.append(worker)
            self._cond.notify_all()
        if not keep:
            worker.kill()

    def worker_pids(self) -> list[int]:
        """Process ids of the running workers (for monitoring)."""
        with self._cond:
            return [w.pid for w in [*self._idle, *self._leased] if w.alive]

    def close(self) -> None:
        """Stop every idle worker now and every leased one when it is returned."""
        if os.getpid() != self._pid:
            return  # a forked child: the workers are its parent's
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._cond.notify_all()
        for worker in idle:
            worker.kill()


_default: WorkerPool | None = None
_default_lock = threading.Lock()


def _forget_default_in_child() -> None:
    """A forked child must not talk to its parent's workers: it starts its own."""
    global _default, _default_lock
    _default, _default_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_default_in_child)

#: Task modules a default worker imports before it is ready.
DEFAULT_PRELOAD = ("tablerag_agents.tables.load_task", "tablerag_agents.tables.sql_task")


def default_pool() -> WorkerPool:
    """The process-wide pool used by ``load_table`` and the SQL engine (created on first use).

    Like a thread pool, it is a process resource: one per host process, its
    workers stopped at exit.
    """
    global _default
    with _default_lock:
        if _default is None or _default._closed:
            _default = WorkerPool(preload=DEFAULT_PRELOAD)
            atexit.register(_default.close)
        return _default
