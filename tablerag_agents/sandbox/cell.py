"""Run one notebook-style cell: all statements, then the value of the last expression.

Runs inside the sandbox (stdlib only). Output is captured with a cap, a soft
wall-clock limit interrupts pure-Python loops, and errors become a short
traceback holding only the frames of the cell itself.
"""

from __future__ import annotations

import ast
import linecache
import signal
import sys
import traceback
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import Any

MAX_ERROR_CHARS = 2_000


class ExecTimeout(BaseException):
    """Raised inside user code when the soft time limit fires (not an ``Exception``)."""


class CappedWriter:
    """A text stream that keeps the first ``cap`` characters and counts the rest."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.parts: list[str] = []
        self.kept = 0
        self.dropped = 0

    def write(self, text: str) -> int:
        """Store text up to the cap; count what is dropped."""
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        room = self.cap - self.kept
        if room > 0:
            self.parts.append(text[:room])
            self.kept += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def flush(self) -> None:
        """Nothing to flush."""

    def isatty(self) -> bool:
        """Not a terminal."""
        return False

    def getvalue(self) -> str:
        """Return the kept text plus a truncation note when something was dropped."""
        text = "".join(self.parts)
        if self.dropped:
            text += f"\n... [truncated: {self.dropped} more chars of output]"
        return text


@dataclass
class CellOutcome:
    """What running a cell produced."""

    value: Any = None
    stdout: str = ""
    error: str | None = None
    error_type: str | None = None
    timed_out: bool = False


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    raise ExecTimeout


def short_traceback(exc: BaseException, filename: str) -> str:
    """Format ``exc`` with only the frames that belong to the cell ``filename``."""
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        text = "".join(traceback.format_exception_only(type(exc), exc))
    else:
        tb: TracebackType | None = exc.__traceback__
        frames = [f for f in traceback.extract_tb(tb) if f.filename == filename]
        lines = ["Traceback (most recent call last):\n"] if frames else []
        lines += traceback.format_list(frames)
        lines += traceback.format_exception_only(type(exc), exc)
        text = "".join(lines)
    text = text.rstrip("\n")
    if len(text) > MAX_ERROR_CHARS:
        text = text[: MAX_ERROR_CHARS // 2] + "\n...\n" + text[-MAX_ERROR_CHARS // 2 :]
    return text


def _compile(code: str, filename: str) -> tuple[Any, Any]:
    """Compile the cell body and, when the last statement is an expression, that expression."""
    tree = ast.parse(code, filename=filename, mode="exec")
    last = None
    final = tree.body[-1] if tree.body else None
    if isinstance(final, ast.Expr):
        tree.body.pop()
        last = ast.Expression(body=final.value)
    body = compile(tree, filename, "exec")
    return body, (compile(last, filename, "eval") if last is not None else None)


def run_cell(
    code: str,
    namespace: dict[str, Any],
    filename: str,
    *,
    timeout: float,
    max_output_chars: int,
    finish: Any = None,
) -> CellOutcome:
    """Execute ``code`` in ``namespace`` and return its value, output and error.

    Args:
        code: Python source of the cell.
        namespace: Globals of the cell; persists across cells of one session.
        filename: Name shown in tracebacks (unique per cell).
        timeout: Soft wall-clock limit in seconds (SIGALRM raises inside the code).
        max_output_chars: Cap on captured stdout/stderr.
        finish: Optional callable applied to the value while still under the time
            limit and output capture (encoding may run user ``__repr__`` code).
    """
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    out = CappedWriter(max_output_chars)
    outcome = CellOutcome()
    saved = sys.stdout, sys.stderr
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    sys.stdout = sys.stderr = out  # type: ignore[assignment]
    try:
        # Keep firing after the first alarm so code that swallows one still stops.
        signal.setitimer(signal.ITIMER_REAL, max(timeout, 0.001), 0.25)
        try:
            body, last = _compile(code, filename)
            exec(body, namespace)  # noqa: S102 - this is the sandboxed worker
            value = eval(last, namespace) if last is not None else None  # noqa: S307
            outcome.value = finish(value) if finish is not None else value
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except ExecTimeout:
        outcome.timed_out = True
        outcome.error_type = "TimeoutError"
        outcome.error = f"TimeoutError: the code ran longer than the {timeout:g} s time limit"
    except BaseException as exc:  # noqa: BLE001 - every user error is reported, not raised
        outcome.error_type = type(exc).__name__
        outcome.error = short_traceback(exc, filename)
    finally:
        sys.stdout, sys.stderr = saved
        signal.signal(signal.SIGALRM, previous)
    outcome.stdout = out.getvalue()
    return outcome
