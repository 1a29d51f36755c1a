"""Helpers of the MCP tests: a tiny table folder and ``tablerag mcp`` run as a subprocess."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LAKES_CSV = """Name,Area (km2),Max depth (m)
Lake Van,3755,451
Lake Tuz,1500,2
Lake Beysehir,656,10
"""

#: How long a server may take to start on a busy 2-core machine.
START_TIMEOUT_S = 120


def table_folder(root: Path) -> Path:
    """A folder with one small table, ``lakes`` (the id the server registers)."""
    folder = root / "tables"
    folder.mkdir()
    (folder / "lakes.csv").write_text(LAKES_CSV, encoding="utf-8")
    return folder


def server_env(cache: Path) -> dict[str, str]:
    """The environment of a server process: its own cache dir, no user config."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLERAG_")}
    env["TABLERAG_CACHE_DIR"] = str(cache)
    return env


def mcp_command(*args: str) -> list[str]:
    """``tablerag mcp ARGS`` with this interpreter."""
    return [sys.executable, "-m", "tablerag_agents.cli", "mcp", *args]


@contextmanager
def http_server(tables: Path, cache: Path, *args: str) -> Iterator[tuple[str, list[str]]]:
    """Run ``tablerag mcp --http --port 0``; yield its endpoint URL and its stderr lines so far."""
    proc = subprocess.Popen(
        mcp_command("--tables", str(tables), "--http", "--port", "0", *args),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=server_env(cache),
        cwd=cache,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stderr is not None
    stderr = proc.stderr
    threading.Thread(target=lambda: [lines.put(line) for line in stderr], daemon=True).start()
    seen: list[str] = []
    url = None
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while url is None:
            if proc.poll() is not None:
                time.sleep(0.2)
                raise AssertionError(f"server exited {proc.returncode}: {''.join(_drain(lines))}")
            if time.monotonic() > deadline:
                raise AssertionError(f"server did not start: {''.join(seen)}")
            try:
                line = lines.get(timeout=0.5)
            except queue.Empty:
                continue
            seen.append(line)
            if found := re.search(r"listening on (http://\S+)", line):
                url = found.group(1)
        yield url, seen
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _drain(lines: queue.Queue[str]) -> list[str]:
    out = []
    while not lines.empty():
        out.append(lines.get())
    return out
