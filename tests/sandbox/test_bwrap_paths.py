"""Host paths under /tmp must stay visible inside the sandbox (its /tmp is private)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablerag_agents.sandbox.bwrap import RuntimePaths, build_command, site_destinations
from tablerag_agents.sandbox.policy import SandboxPolicy


def test_site_packages_under_tmp_are_mounted_elsewhere(tmp_path: Path) -> None:
    venv_site = tmp_path / ".venv" / "site-packages"
    venv_site.mkdir(parents=True)
    if not venv_site.is_relative_to("/tmp"):
        pytest.skip("pytest's temporary folder is not under /tmp here")
    paths = RuntimePaths(
        python=Path("/usr/bin/python3"),
        prefix=Path("/usr"),
        site_packages=(Path("/usr/lib/python3/dist-packages"), venv_site),
        setpriv=None,
    )
    pairs = site_destinations(paths)
    assert pairs[0] == (Path("/usr/lib/python3/dist-packages"), "/usr/lib/python3/dist-packages")
    assert pairs[1][1] == "/opt/tablerag/site1"
    cmd = build_command("bwrap", SandboxPolicy(), paths, uid=None, seccomp_fd=None, argv=["py"])
    # The venv is bound to its new place, and nothing is bound inside the private /tmp.
    dests = [cmd[i + 2] for i, arg in enumerate(cmd) if arg == "--ro-bind"]
    assert "/opt/tablerag/site1" in dests
    assert not any(d.startswith("/tmp") for d in dests)
