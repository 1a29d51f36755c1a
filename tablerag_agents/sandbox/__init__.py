"""Sandboxed execution of model-written Python over pandas DataFrames.

Code runs in bubblewrap jails (no network, read-only system, private /tmp,
unprivileged uid, rlimits, seccomp) served by warm workers; data crosses the
boundary as Arrow IPC and JSON, never pickle. Without a usable bubblewrap,
:class:`Sandbox` raises :class:`~tablerag_agents.errors.SandboxUnavailableError`.

Example:
    >>> with Sandbox() as sb, sb.session({"df": df}) as s:
    ...     s.run("x = df['a'].sum()")
    ...     s.run("x * 2").value
"""

from .policy import SandboxPolicy
from .result import ExecResult
from .runner import Sandbox, SandboxStats
from .session import Session

__all__ = ["ExecResult", "Sandbox", "SandboxPolicy", "SandboxStats", "Session"]
