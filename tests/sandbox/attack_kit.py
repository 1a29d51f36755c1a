"""Context, runner and check helpers for the sandbox attack payloads (attack_payloads.py).

Shared by ``tests/sandbox/test_attacks.py`` and ``bench/sandbox.py``. A payload
is one or more code steps; each step runs as a one-shot ``Sandbox.run`` (a new
session), so multi-step payloads also test what survives between sessions.
``$name`` placeholders are filled from :class:`AttackContext`.
"""

from __future__ import annotations

import os
import secrets
import socket
import string
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from tablerag_agents.sandbox import ExecResult, Sandbox

REPO = Path(__file__).resolve().parents[2]
SMALL = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})


@dataclass
class AttackContext:
    """Host-side bait and witnesses for the payloads."""

    repo: Path
    site_packages: Path
    home_canary: Path
    home_secret: str
    env_name: str
    env_secret: str
    listener: socket.socket
    sentinel: subprocess.Popen[bytes]
    timeout: float = 2.0
    grace: float = 1.0
    max_processes: int = 16
    max_output_chars: int = 10_000
    max_repr_chars: int = 4_000

    def fields(self) -> dict[str, str]:
        """Values for ``$name`` placeholders in payload code."""
        return {
            "repo": str(self.repo),
            "site_packages": str(self.site_packages),
            "home": str(Path.home()),
            "home_canary": str(self.home_canary),
            "env_name": self.env_name,
            "port": str(self.listener.getsockname()[1]),
            "sentinel_pid": str(self.sentinel.pid),
        }


@contextmanager
def attack_context(site_packages: Path) -> Iterator[AttackContext]:
    """Plant a readable secret in the host home, a secret env var, a loopback listener
    and a sentinel host process; remove them all afterwards."""
    secret = "canary-" + secrets.token_hex(16)
    canary = Path.home() / f".tablerag_canary_{secrets.token_hex(4)}"
    canary.write_text(secret)
    canary.chmod(0o644)  # world-readable on purpose: only the sandbox's mounts protect it
    env_name = f"TABLERAG_CANARY_{secrets.token_hex(4).upper()}"
    os.environ[env_name] = "env-" + secret
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    sentinel = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        yield AttackContext(
            REPO, site_packages, canary, secret, env_name, "env-" + secret, listener, sentinel
        )
    finally:
        sentinel.kill()
        sentinel.wait()
        listener.close()
        os.environ.pop(env_name, None)
        canary.unlink(missing_ok=True)


Check = Callable[[list[ExecResult], AttackContext], None]


@dataclass
class Attack:
    """A hostile payload and the assertion that it was contained."""

    name: str
    steps: list[str]
    check: Check
    timeout: float | None = None
    tables: dict[str, pd.DataFrame] = field(default_factory=lambda: {"df": SMALL})


def run_attack(sb: Sandbox, attack: Attack, ctx: AttackContext) -> list[ExecResult]:
    """Run every step of ``attack`` as its own one-shot run."""
    values = ctx.fields()
    return [
        sb.run(string.Template(step).substitute(values), attack.tables, timeout=attack.timeout)
        for step in attack.steps
    ]


def check_normal(sb: Sandbox) -> None:
    """The sandbox still computes a normal result correctly."""
    res = sb.run("print('ok')\nint(df['a'].sum()) * 10", {"df": SMALL})
    assert res.ok and res.value == 60 and res.stdout == "ok\n", res


# -- helpers for checks ------------------------------------------------------------------


def failed(res: ExecResult, *types: str) -> None:
    """The step raised one of ``types`` inside the sandbox."""
    assert not res.ok, f"expected {types}, but the code succeeded: {res.value_repr[:300]}"
    assert res.error_type in types, f"expected {types}, got {res.error_type}: {res.error}"


def no_leak(res: ExecResult, *secrets_: str) -> None:
    """None of ``secrets_`` appears anywhere in what came back."""
    text = res.observation(10**7) + repr(res.value) + res.stdout
    for secret in secrets_:
        assert secret not in text, f"secret leaked: {text[:300]}"


def host_missing(path: Path) -> None:
    """A file the payload tried to create does not exist on the host."""
    assert not path.exists(), f"payload created {path} on the host"
    path.unlink(missing_ok=True)


def host_alive(ctx: AttackContext) -> None:
    assert ctx.sentinel.poll() is None, "a host process was killed"


def no_connection(ctx: AttackContext) -> None:
    try:
        conn, _ = ctx.listener.accept()
    except BlockingIOError:
        return
    conn.close()
    raise AssertionError("the sandbox reached a host loopback listener")


def timed(limit_extra: float) -> Check:
    def check(rs: list[ExecResult], ctx: AttackContext) -> None:
        res = rs[0]
        assert res.timed_out and res.error_type == "TimeoutError", res
        assert res.duration_s < ctx.timeout + ctx.grace + limit_extra, res.duration_s

    return check


# FileNotFoundError: the target folder is not even mounted inside (a venv under /tmp).
WRITE_ERRORS = ("OSError", "PermissionError", "FileNotFoundError")
READ_ERRORS = ("FileNotFoundError", "PermissionError", "NotADirectoryError")
