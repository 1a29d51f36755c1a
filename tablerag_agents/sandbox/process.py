"""Host side of one sandbox: the bubblewrap process and deadline-bound frame I/O."""

from __future__ import annotations

import fcntl
import logging
import os
import select
import signal
import subprocess
import time
from typing import Any

from ..errors import SandboxError
from . import protocol
from .bwrap import HOST_ENV

logger = logging.getLogger(__name__)

_F_SETPIPE_SZ = 1031
_PIPE_SIZE = 1 << 20
_STDERR_CAP = 8192


class WorkerTimeout(Exception):
    """No complete frame arrived before the deadline."""


class WorkerDied(Exception):
    """The worker closed its pipe or sent something that is not a valid frame."""


class WorkerProcess:
    """A running sandbox (bwrap + warm zygote) and its two pipes."""

    def __init__(self, cmd: list[str], pass_fds: tuple[int, ...], max_blob: int) -> None:
        self.max_blob = max_blob
        self.runs = 0
        self.sessions = 0
        self.pending_exit = False
        self.hello: dict[str, Any] | None = None
        self.started = time.monotonic()
        self.proc = subprocess.Popen(  # noqa: S603 - fixed argv, no shell
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=HOST_ENV,
            pass_fds=pass_fds,
            start_new_session=True,
        )
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        self._w = self.proc.stdin.fileno()
        self._r = self.proc.stdout.fileno()
        for fd in (self._w, self._r, self.proc.stderr.fileno()):
            os.set_blocking(fd, False)
        for fd in (self._w, self._r):
            try:
                fcntl.fcntl(fd, _F_SETPIPE_SZ, _PIPE_SIZE)
            except OSError:  # pipe-max-size may be lower; the default still works
                pass
        self._buf = bytearray()

    @property
    def alive(self) -> bool:
        """Whether the bwrap process is still running."""
        return self.proc.poll() is None

    def stderr_text(self) -> str:
        """Whatever bwrap or the worker wrote to stderr (capped), for error messages."""
        assert self.proc.stderr
        try:
            data = os.read(self.proc.stderr.fileno(), _STDERR_CAP)
        except (BlockingIOError, OSError, ValueError):
            return ""
        return data.decode(errors="replace").strip()

    def wait_ready(self, timeout: float) -> None:
        """Wait for the worker's hello (pandas imported) or raise :class:`SandboxError`."""
        if self.hello is not None:
            return
        try:
            message, _ = self.recv(time.monotonic() + timeout)
        except (WorkerTimeout, WorkerDied) as exc:
            detail = self.stderr_text()
            self.kill()
            raise SandboxError(f"sandbox worker failed to start: {exc}; {detail}") from exc
        if message.get("op") != "hello":
            self.kill()
            raise SandboxError(f"sandbox worker sent {message.get('op')!r} instead of hello")
        self.hello = message
        logger.debug("worker ready in %.2fs: %s", time.monotonic() - self.started, message)

    def send(self, message: dict[str, Any], blob: bytes, deadline: float) -> None:
        """Write one frame, failing with :class:`WorkerDied` or :class:`WorkerTimeout`."""
        view = memoryview(protocol.encode_frame(message, blob))
        poller = select.poll()
        poller.register(self._w, select.POLLOUT)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerTimeout("worker stopped reading")
            if not poller.poll(remaining * 1000):
                continue
            try:
                view = view[os.write(self._w, view) :]
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError) as exc:
                raise WorkerDied(f"worker pipe closed: {exc}") from exc

    def _take_frame(self) -> tuple[dict[str, Any], bytes] | None:
        size = protocol.HEADER.size
        if len(self._buf) < size:
            return None
        try:
            json_len, blob_len = protocol.parse_header(bytes(self._buf[:size]), self.max_blob)
        except protocol.ProtocolError as exc:
            raise WorkerDied(str(exc)) from exc
        end = size + json_len + blob_len
        if len(self._buf) < end:
            return None
        try:
            message = protocol.decode_message(bytes(self._buf[size : size + json_len]))
        except protocol.ProtocolError as exc:
            raise WorkerDied(str(exc)) from exc
        blob = bytes(self._buf[size + json_len : end])
        del self._buf[:end]
        return message, blob

    def recv(self, deadline: float) -> tuple[dict[str, Any], bytes]:
        """Read one frame before ``deadline`` (a ``time.monotonic()`` value)."""
        poller = select.poll()
        poller.register(self._r, select.POLLIN)
        while True:
            frame = self._take_frame()
            if frame is not None:
                return frame
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerTimeout("no answer before the deadline")
            if not poller.poll(remaining * 1000):
                continue
            try:
                chunk = os.read(self._r, _PIPE_SIZE)
            except BlockingIOError:
                continue
            if not chunk:
                raise WorkerDied("worker closed its pipe")
            self._buf += chunk

    def settle(self, timeout: float) -> None:
        """Consume the zygote's report that the previous session ended."""
        if not self.pending_exit:
            return
        message, _ = self.recv(time.monotonic() + timeout)
        if message.get("op") != "exit":
            raise WorkerDied(f"expected the session exit report, got {message.get('op')!r}")
        self.pending_exit = False

    def kill(self) -> None:
        """Kill bwrap (its process group); ``--die-with-parent`` and the pid namespace
        take every sandboxed process down with it."""
        if self.proc.returncode is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                logger.error("bwrap pid %s did not exit after SIGKILL", self.proc.pid)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
