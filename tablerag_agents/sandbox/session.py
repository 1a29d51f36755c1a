"""A sandbox session: tables sent once, one namespace kept across runs (a ReAct loop)."""

from __future__ import annotations

import keyword
import logging
import secrets
import signal
import threading
import time
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..errors import SandboxError
from . import codec
from .process import FrameChannel, ProtocolViolation, WorkerDied, WorkerProcess, WorkerTimeout
from .result import ExecResult

if TYPE_CHECKING:
    from .runner import Sandbox

logger = logging.getLogger(__name__)

RESERVED_NAMES = frozenset({"pd", "np", "_"})
RESTART_NOTE = (
    "the Python session was restarted: variables from earlier runs are lost "
    "(the tables were loaded again)"
)


def check_table_names(tables: dict[str, pd.DataFrame]) -> None:
    """Raise ValueError unless every key is a plain identifier usable as a variable."""
    for name in tables:
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise ValueError(f"table name {name!r} is not a valid Python identifier")
        if name.startswith("__") or name in RESERVED_NAMES:
            raise ValueError(f"table name {name!r} is reserved; use another variable name")


def _describe_exit(message: dict[str, Any]) -> tuple[str, str, bool]:
    """Turn the zygote's exit report into (error text, error type, timed_out)."""
    signum, code = message.get("signal"), message.get("code")
    if signum == signal.SIGXCPU:
        text = "TimeoutError: CPU time limit exceeded; the process was stopped"
        return text, "TimeoutError", True
    if signum is not None:
        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = f"signal {signum}"
        hint = " (often memory exhaustion inside a C extension)" if name != "SIGKILL" else ""
        return f"ProcessKilled: the Python process died from {name}{hint}", "ProcessKilled", False
    return f"ProcessExit: the Python process exited with status {code}", "ProcessExit", False


def _text(value: Any, cap: int) -> str:
    """A string no longer than ``cap`` from a field that should already be one."""
    return (value if isinstance(value, str) else str(value))[:cap]


class Session:
    """A stateful sandboxed namespace. Use as a context manager, or call :meth:`close`."""

    def __init__(self, sandbox: Sandbox, tables: dict[str, pd.DataFrame]) -> None:
        check_table_names(tables)
        self._sandbox = sandbox
        self._entries, self._blob = codec.encode_tables(tables)
        self._notes = [f"{e['name']}: {n}" for e in self._entries for n in e["notes"]]
        for note in self._notes:
            logger.info("table conversion: %s", note)
        self._worker: WorkerProcess | None = None
        self._channel: FrameChannel | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._lost_state = False
        self._opened_once = False

    def __del__(self) -> None:
        # A forgotten session must not keep its worker leased forever.
        try:
            self.close()
        except Exception:  # noqa: BLE001, S110 - never raise from a finalizer
            pass

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open(self) -> tuple[WorkerProcess, FrameChannel]:
        sandbox = self._sandbox
        worker = sandbox._acquire()
        try:
            channel = worker.open_session(secrets.token_hex(8), time.monotonic() + 10)
        except (WorkerDied, WorkerTimeout) as exc:
            sandbox._discard(worker)
            raise SandboxError(f"the sandbox failed to open a session: {exc}") from exc
        try:
            try:
                tables = {"op": "tables", "tables": self._entries}
                channel.send(tables, self._blob, time.monotonic() + 120)
            except WorkerDied:
                pass  # it stopped reading (e.g. out of memory): its error message may follow
            message, _ = channel.recv(time.monotonic() + sandbox.policy.startup_timeout_s)
        except (WorkerDied, WorkerTimeout) as exc:
            channel.close()
            report = self._after_death(worker, exc)
            reason = _describe_exit(report)[0] if report else str(exc)
            raise SandboxError(f"the sandbox could not load the tables: {reason}") from exc
        if message.get("op") != "opened":
            channel.close()
            if message.get("op") == "error":
                sandbox._release(worker, reusable=True)
                error = str(message.get("error"))[:500]
                hint = " (raise SandboxPolicy.memory_mb)" if "MemoryError" in error else ""
                raise SandboxError(f"the sandbox could not load the tables: {error}{hint}")
            sandbox._discard(worker)
            raise SandboxError(f"unexpected message from the sandbox: {message.get('op')!r}")
        sandbox.stats.sessions += 1
        return worker, channel

    def _after_death(self, worker: WorkerProcess, exc: Exception) -> dict[str, Any] | None:
        """After the session process vanished, fetch the zygote's exit report."""
        if not isinstance(exc, ProtocolViolation) and not isinstance(exc, WorkerTimeout):
            try:
                report = worker.wait_exit(timeout=5.0)
            except (WorkerDied, WorkerTimeout):
                pass
            else:
                self._sandbox._release(worker, reusable=True)
                return report
        self._sandbox._discard(worker)
        return None

    def run(self, code: str, timeout: float | None = None) -> ExecResult:
        """Run ``code`` in this session's namespace; the last expression is the value."""
        if not isinstance(code, str):
            raise TypeError(f"code must be a str, got {type(code).__name__}")
        policy = self._sandbox.policy
        limit = policy.timeout_s if timeout is None else float(timeout)
        if limit <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        with self._lock:
            if self._closed or self._sandbox._closed:
                raise SandboxError("the session or its sandbox is closed")
            start = time.perf_counter()
            notes: list[str] = []
            if self._worker is None or self._channel is None:
                self._worker, self._channel = self._open()
                if self._lost_state:
                    notes.append(RESTART_NOTE)
                    self._lost_state = False
                elif not self._opened_once:
                    notes.extend(self._notes)  # tell the caller once how tables were converted
                self._opened_once = True
            result = self._exchange(self._worker, self._channel, code, limit, notes)
            result.duration_s = time.perf_counter() - start
            return result

    def _exchange(
        self,
        worker: WorkerProcess,
        channel: FrameChannel,
        code: str,
        limit: float,
        notes: list[str],
    ) -> ExecResult:
        stats = self._sandbox.stats
        stats.runs += 1
        worker.runs += 1
        now = time.monotonic()
        try:
            channel.send({"op": "run", "code": code, "timeout": limit}, b"", now + 30)
            message, blob = channel.recv(now + limit + self._sandbox.policy.kill_grace_s)
        except WorkerTimeout:
            stats.timeouts += 1
            self._forget(channel)
            self._sandbox._discard(worker)
            error = f"TimeoutError: the code did not stop within the {limit:g} s time limit"
            return ExecResult(False, error=error, error_type="TimeoutError", timed_out=True)
        except WorkerDied as exc:
            stats.crashes += 1
            self._forget(channel)
            report = self._after_death(worker, exc)
            if report is None:
                error = f"SandboxCrash: the sandbox stopped while running the code ({exc})"
                return ExecResult(False, error=error, error_type="SandboxCrash")
            error, error_type, timed_out = _describe_exit(report)
            stats.timeouts += int(timed_out)
            return ExecResult(False, error=error, error_type=error_type, timed_out=timed_out)
        if message.get("op") != "result":
            stats.crashes += 1
            self._forget(channel)
            self._sandbox._discard(worker)
            error = f"SandboxCrash: unexpected message {message.get('op')!r} from the sandbox"
            return ExecResult(False, error=error, error_type="SandboxCrash")
        return self._result(message, blob, notes)

    def _forget(self, channel: FrameChannel) -> None:
        channel.close()
        self._worker = self._channel = None
        self._lost_state = True

    def _result(self, message: dict[str, Any], blob: bytes, notes: list[str]) -> ExecResult:
        # Everything here came from sandboxed code, which can forge frames: check types.
        meta = message.get("value")
        meta = meta if isinstance(meta, dict) else {}
        try:
            value = codec.decode_value(meta, blob)
        except Exception as exc:  # noqa: BLE001 - hostile data; reported in the notes
            value = None
            notes.append(f"the value could not be decoded ({type(exc).__name__}: {exc}); repr only")
        if meta.get("note"):
            notes.append(str(meta["note"])[:1000])
        timed_out = message.get("timed_out") is True
        if timed_out:
            self._sandbox.stats.timeouts += 1
        error, error_type = message.get("error"), message.get("error_type")
        policy = self._sandbox.policy
        return ExecResult(
            ok=error is None,
            value=value,
            value_repr=_text(meta.get("repr", ""), policy.max_repr_chars + 200),
            stdout=_text(message.get("stdout", ""), policy.max_output_chars + 200),
            error=None if error is None else _text(error, 4000),
            error_type=None if error_type is None else _text(error_type, 100),
            timed_out=timed_out,
            value_type=_text(meta.get("type"), 100) if meta.get("kind") != "none" else None,
            notes=notes,
        )

    def close(self) -> None:
        """End the session: its process exits and the worker is cleaned for reuse."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._channel is not None and self._worker is not None:
                self._channel.close()  # the session process reads EOF and exits
                self._sandbox._release(self._worker, reusable=True)
            self._worker = self._channel = None
