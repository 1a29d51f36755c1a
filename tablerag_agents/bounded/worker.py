"""The bounded worker process: runs host-chosen tasks on untrusted data under rlimits.

Started by :class:`~tablerag_agents.bounded.pool.WorkerPool` as
``python -m tablerag_agents.bounded.worker CONFIG`` with one end of a
socketpair; it imports pandas once, says hello, then serves task frames
(:mod:`tablerag_agents.sandbox.protocol`: JSON plus an Arrow blob, never
pickle) one at a time. Before each task it caps the address space
(``RLIMIT_AS``: the worker's current size plus the task's budget) and the CPU
time (soft ``RLIMIT_CPU``: CPU used so far plus the budget; the kernel kills
the worker with ``SIGXCPU`` past it). The host enforces the wall clock.

A task is a function ``run(args, blob) -> (reply, blob)`` in a module of this
package's distribution, named by the host. An exception comes back as data; one
caused by a failed allocation is reported as the memory limit.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import resource
import sys
import time
from collections.abc import Callable
from typing import Any

from tablerag_agents.bounded.limits import memory_cause
from tablerag_agents.sandbox import protocol

#: Largest blob a task may receive (the frame header holds a uint32).
MAX_BLOB = 2**32 - 1

Task = Callable[[dict[str, Any], bytes], tuple[dict[str, Any], bytes]]


def proc_status() -> dict[str, int]:
    """``VmSize``, ``VmRSS`` and ``VmHWM`` of this process in bytes (empty off Linux)."""
    out: dict[str, int] = {}
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key in ("VmSize", "VmRSS", "VmHWM"):
                    out[key] = int(value.split()[0]) * 1024
    except OSError:
        pass
    return out


def _set_soft(which: int, soft: int) -> None:
    _, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        soft = hard if soft == resource.RLIM_INFINITY else min(soft, hard)
    resource.setrlimit(which, (soft, hard))


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class _Limited:
    """Apply a task's memory and CPU limits, and lift them afterwards."""

    def __init__(self, memory: int | None, cpu: float) -> None:
        self.memory = memory
        self.cpu = cpu

    def __enter__(self) -> None:
        if self.memory is not None:
            size = proc_status().get("VmSize")
            if size is not None:
                _set_soft(resource.RLIMIT_AS, size + self.memory)
        _set_soft(resource.RLIMIT_CPU, math.ceil(_cpu_used() + self.cpu))

    def __exit__(self, *exc: object) -> None:
        _set_soft(resource.RLIMIT_AS, resource.RLIM_INFINITY)
        _set_soft(resource.RLIMIT_CPU, resource.RLIM_INFINITY)


class Worker:
    """Serve task frames on one file descriptor until the host closes it."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.tasks: dict[str, Task] = {}

    def task(self, name: str) -> Task:
        """Import the task module ``name`` (only this distribution's modules)."""
        if name not in self.tasks:
            if not name.startswith("tablerag_agents."):
                raise ValueError(f"unknown task module {name!r}")
            module = importlib.import_module(name)
            self.tasks[name] = module.run
        return self.tasks[name]

    def serve(self) -> None:
        """Answer one reply frame per task frame."""
        while True:
            try:
                message, blob = protocol.read_frame(self.fd, MAX_BLOB)
            except protocol.ProtocolError:
                return  # the host closed the channel
            if message.get("op") != "task":
                return
            reply, out = self.run(message, bytes(blob))
            del blob
            protocol.write_frame(self.fd, reply, out)

    def run(self, message: dict[str, Any], blob: bytes) -> tuple[dict[str, Any], bytes]:
        """Run one task under its limits; errors come back as data."""
        limits = message.get("limits") or {}
        started = time.perf_counter()
        reply: dict[str, Any]
        out = b""
        try:
            task = self.task(str(message.get("task")))
            with _Limited(limits.get("memory"), float(limits.get("cpu", 60.0))):
                result, out = task(message.get("args") or {}, blob)
            reply = {"op": "done", "ok": True, "result": result}
        except BaseException as exc:  # noqa: BLE001 - every failure goes back to the host
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            reply = {"op": "done", "ok": False, **describe_error(exc)}
        reply["seconds"] = time.perf_counter() - started
        reply["status"] = proc_status()
        return reply, out


def describe_error(exc: BaseException) -> dict[str, Any]:
    """A task's exception as JSON data: its type, message, typed fields, memory or not.

    For a failed allocation, ``error`` is the first line of the allocation's own
    error (``MemoryError``, DuckDB's "Out of Memory Error: ...").
    """
    cause = memory_cause(exc)
    fields = {
        key: value
        for key in ("reason", "limit", "value", "detail", "source")
        if isinstance(value := getattr(exc, key, None), str)
    }
    shown = exc if cause is None else cause
    text = str(shown).strip()
    return {
        "error_type": type(exc).__name__,
        "error": (text.splitlines()[0] if text else repr(shown))[:2000],
        "fields": fields,
        "memory": cause is not None,
        "retire": cause is not None,  # after a failed allocation, start afresh
    }


def main(argv: list[str]) -> None:
    """Entry point: import the libraries and preloaded tasks, say hello, serve."""
    config = json.loads(argv[0])
    fd = int(config["fd"])
    os.set_inheritable(fd, False)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    started = time.perf_counter()
    import pyarrow as pa

    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)
    worker = Worker(fd)
    for name in config.get("preload", []):
        worker.task(str(name))
    hello = {
        "op": "hello",
        "pid": os.getpid(),
        "import_s": time.perf_counter() - started,
        "status": proc_status(),
    }
    os.dup2(devnull, 2)  # stderr stays open until here so start-up failures reach the host
    os.close(devnull)
    protocol.write_frame(fd, hello)
    worker.serve()


if __name__ == "__main__":
    main(sys.argv[1:])
