"""The outcome of one sandboxed run, and the text an LLM sees of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def _clip_head(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: max(limit - 40, 0)] + f"\n... [truncated {len(text) - limit + 40} chars]"


def _clip_tail(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"[... {len(text) - limit + 40} chars cut]\n" + text[-max(limit - 40, 0) :]


@dataclass
class ExecResult:
    """What running a piece of model-written code produced.

    Attributes:
        ok: True when the code ran to the end without an exception.
        value: Value of the last expression: JSON data (scalars, lists, dicts),
            or a ``pd.DataFrame`` / ``pd.Series`` rebuilt from Arrow; None when
            there was none or it cannot travel as data (see ``value_repr``).
        value_repr: Short, capped ``repr`` of the value, made inside the sandbox.
        stdout: Printed output (stdout and stderr), capped with a truncation note.
        error: Short traceback (only the frames of the code) or a limit message.
        error_type: Exception class name (``"KeyError"``, ``"TimeoutError"``...).
        timed_out: The run hit the wall-clock or CPU limit.
        duration_s: Wall-clock seconds seen by the caller, transfers included.
        value_type: Type name of the value inside the sandbox (``"DataFrame"``...).
        notes: Remarks for the caller or the model (value not transferable,
            session restarted after a crash, columns converted...).
    """

    ok: bool
    value: Any = None
    value_repr: str = ""
    stdout: str = ""
    error: str | None = None
    error_type: str | None = None
    timed_out: bool = False
    duration_s: float = 0.0
    value_type: str | None = None
    notes: list[str] = field(default_factory=list)

    def observation(self, max_chars: int = 2000) -> str:
        """Return the text to show the model: output, then the error or the value.

        The error (whose last line matters most) keeps its tail; output keeps
        its head; both fit in ``max_chars``.
        """
        main = self.error if self.error else self.value_repr
        extra = "".join(f"\n[note] {note}" for note in self.notes)
        main = (main or "") + extra
        out = self.stdout.rstrip("\n")
        if not out and not main.strip():
            return "(no output)"
        budget_main = min(len(main), max(max_chars - min(len(out), max_chars // 2), max_chars // 2))
        main_text = _clip_tail(main, budget_main) if self.error else _clip_head(main, budget_main)
        out_text = _clip_head(out, max(max_chars - len(main_text) - 1, 0)) if out else ""
        return "\n".join(part for part in (out_text, main_text) if part)
