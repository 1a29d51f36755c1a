"""Host side of one sandbox: the bubblewrap process, its control socket, session channels.

The zygote inside talks to the host over a SOCK_SEQPACKET control socket that
no forked child ever holds (it only announces readiness and reports each
child's exit). Every session gets a brand-new socketpair, passed to the
zygote with SCM_RIGHTS, so nothing one session writes can reach the next.
"""

from __future__ import annotations

import json
import logging
import os
import select
import signal
import socket
import subprocess
import time
from typing import Any

from ..errors import SandboxError
from . import protocol
from .bwrap import HOST_ENV

logger = logging.getLogger(__name__)

_CHUNK = 1 << 20
_STDERR_CAP = 8192
_CTRL_MAX = 65536


def kill_group(proc: subprocess.Popen[Any], what: str) -> None:
    """SIGKILL the process group led by ``proc`` (started with its own session) and reap it."""
    if proc.returncode is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        logger.error("%s pid %s did not exit after SIGKILL", what, proc.pid)


class WorkerTimeout(Exception):
    """Nothing complete arrived (or could be sent) before the deadline."""


class WorkerDied(Exception):
    """The peer closed its end or sent something that is not a valid frame."""


class ProtocolViolation(WorkerDied):
    """The sandbox sent bytes that are not a valid frame (hostile or corrupt)."""


def _wait(fd: int, events: int, deadline: float) -> None:
    poller = select.poll()
    poller.register(fd, events)
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise WorkerTimeout("no answer before the deadline")
        if poller.poll(remaining * 1000):
            return


class FrameChannel:
    """Deadline-bound frame I/O over the host end of a session socketpair."""

    def __init__(self, sock: socket.socket, max_blob: int) -> None:
        self.sock = sock
        self.max_blob = max_blob
        sock.setblocking(False)
        self._fd = sock.fileno()
        self._buf = bytearray()

    def send(self, message: dict[str, Any], blob: bytes, deadline: float) -> None:
        """Write one frame."""
        view = memoryview(protocol.encode_frame(message, blob))
        while view:
            _wait(self._fd, select.POLLOUT, deadline)
            try:
                view = view[os.write(self._fd, view[:_CHUNK]) :]
            except BlockingIOError:
                continue
            except OSError as exc:
                raise WorkerDied(f"session channel closed: {exc}") from exc

    def _take_frame(self) -> tuple[dict[str, Any], bytes] | None:
        size = protocol.HEADER.size
        if len(self._buf) < size:
            return None
        try:
            json_len, blob_len = protocol.parse_header(bytes(self._buf[:size]), self.max_blob)
            end = size + json_len + blob_len
            if len(self._buf) < end:
                return None
            message = protocol.decode_message(bytes(self._buf[size : size + json_len]))
        except protocol.ProtocolError as exc:
            raise ProtocolViolation(f"invalid frame from the sandbox: {exc}") from exc
        blob = bytes(self._buf[size + json_len : end])
        del self._buf[:end]
        return message, blob

    def recv(self, deadline: float) -> tuple[dict[str, Any], bytes]:
        """Read one frame before ``deadline`` (a ``time.monotonic()`` value)."""
        while True:
            frame = self._take_frame()
            if frame is not None:
                return frame
            _wait(self._fd, select.POLLIN, deadline)
            try:
                chunk = os.read(self._fd, _CHUNK)
            except BlockingIOError:
                continue
            except OSError as exc:
                raise WorkerDied(f"session channel failed: {exc}") from exc
            if not chunk:
                raise WorkerDied("the session process closed its channel")
            self._buf += chunk

    def close(self) -> None:
        """Close the host end; the session process sees end-of-file and exits."""
        self.sock.close()


class WorkerProcess:
    """A running sandbox (bwrap + warm zygote)."""

    def __init__(
        self, cmd: list[str], ctrl: socket.socket, pass_fds: tuple[int, ...], max_blob: int
    ) -> None:
        self.max_blob = max_blob
        self.runs = 0
        self.pending_exit: str | None = None
        self.hello: dict[str, Any] | None = None
        self.started = time.monotonic()
        self.ctrl = ctrl
        ctrl.setblocking(False)
        self.proc = subprocess.Popen(  # noqa: S603 - fixed argv, no shell
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=HOST_ENV,
            pass_fds=pass_fds,
            start_new_session=True,
        )
        assert self.proc.stderr is not None
        os.set_blocking(self.proc.stderr.fileno(), False)

    @property
    def alive(self) -> bool:
        """Whether the bwrap process is still running."""
        return self.proc.poll() is None

    def stderr_text(self) -> str:
        """What bwrap or the worker wrote to stderr before serving (capped)."""
        assert self.proc.stderr is not None
        try:
            data = os.read(self.proc.stderr.fileno(), _STDERR_CAP)
        except (OSError, ValueError):
            return ""
        return data.decode(errors="replace").strip()

    def ctrl_recv(self, deadline: float) -> dict[str, Any]:
        """Read one control message from the zygote."""
        while True:
            _wait(self.ctrl.fileno(), select.POLLIN, deadline)
            try:
                data = self.ctrl.recv(_CTRL_MAX)
            except BlockingIOError:
                continue
            except OSError as exc:
                raise WorkerDied(f"control socket failed: {exc}") from exc
            if not data:
                raise WorkerDied("the sandbox worker exited")
            try:
                message = json.loads(data)
            except ValueError as exc:
                raise WorkerDied("invalid control message") from exc
            if not isinstance(message, dict):
                raise WorkerDied("invalid control message")
            return message

    def wait_ready(self, timeout: float) -> None:
        """Wait for the zygote's hello (pandas imported) or raise :class:`SandboxError`."""
        if self.hello is not None:
            return
        try:
            message = self.ctrl_recv(time.monotonic() + timeout)
        except (WorkerTimeout, WorkerDied) as exc:
            time.sleep(0.05)  # let bwrap finish writing its error message
            detail = self.stderr_text()
            self.kill()
            raise SandboxError(f"sandbox worker failed to start: {exc}; {detail}") from exc
        if message.get("op") != "hello":
            self.kill()
            raise SandboxError(f"sandbox worker sent {message.get('op')!r} instead of hello")
        self.hello = message
        logger.debug("worker ready in %.2fs: %s", time.monotonic() - self.started, message)

    def open_session(self, sid: str, deadline: float) -> FrameChannel:
        """Hand the zygote a fresh socketpair end; it forks a session process onto it."""
        host_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            data = json.dumps({"op": "open", "sid": sid}).encode()
            _wait(self.ctrl.fileno(), select.POLLOUT, deadline)
            socket.send_fds(self.ctrl, [data], [child_end.fileno()])
        except OSError as exc:
            host_end.close()
            raise WorkerDied(f"control socket failed: {exc}") from exc
        finally:
            child_end.close()
        self.pending_exit = sid
        return FrameChannel(host_end, self.max_blob)

    def wait_exit(self, timeout: float) -> dict[str, Any]:
        """Wait for the zygote's report that the current session process is gone."""
        if self.pending_exit is None:
            raise SandboxError("no session is running on this worker")
        message = self.ctrl_recv(time.monotonic() + timeout)
        if message.get("op") != "exit" or message.get("sid") != self.pending_exit:
            raise WorkerDied(f"unexpected control message {message.get('op')!r}")
        self.pending_exit = None
        return message

    def settle(self, timeout: float) -> None:
        """Consume the exit report of the previous session, if still pending."""
        if self.pending_exit is not None:
            self.wait_exit(timeout)

    def kill(self) -> None:
        """Kill bwrap's process group; ``--die-with-parent`` and the pid namespace take
        every sandboxed process down with it."""
        kill_group(self.proc, "bwrap")
        self.ctrl.close()
        if self.proc.stderr is not None:
            self.proc.stderr.close()
