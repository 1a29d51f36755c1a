"""Build the bubblewrap command line that jails the worker, and check it works.

Only what the interpreter needs is visible inside, read-only: system
libraries, the Python installation (``sys.base_prefix``), the site-packages
directories, and the four worker modules. The repository, home directories,
``/etc`` and ``/usr/bin`` stay invisible. Paths are computed at run time.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SandboxUnavailableError
from .policy import MIB, SandboxPolicy

logger = logging.getLogger(__name__)

INSTALL_HINT = (
    "Install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`, Fedora: "
    "`dnf install bubblewrap`), and make sure it may create namespaces (inside "
    "Docker, run with `--security-opt seccomp=unconfined --cap-add SYS_ADMIN` or "
    "allow unprivileged user namespaces)."
)
SANDBOX_PKG_PARENT = "/opt/tablerag"
SANDBOX_PKG = "tablerag_sandbox"
WORKER_FILES = ("worker.py", "cell.py", "codec.py", "protocol.py")
HOST_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
SANDBOX_ENV = {
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "PATH": "/usr/bin",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    # malloc reserves less address space than mimalloc: bigger tables fit under RLIMIT_AS.
    "ARROW_DEFAULT_MEMORY_POOL": "system",
}
_UID_BASE = 1_900_000_000
_UID_SPAN = 100_000_000


@dataclass(frozen=True)
class RuntimePaths:
    """Host paths the sandboxed interpreter needs, all bound read-only."""

    python: Path
    prefix: Path
    site_packages: tuple[Path, ...]
    setpriv: Path | None

    @classmethod
    def detect(cls) -> RuntimePaths:
        """Find the base interpreter, its prefix and the importable site-packages."""
        base_exe = getattr(sys, "_base_executable", None) or sys.executable
        python = Path(os.path.realpath(base_exe))
        prefix = Path(os.path.realpath(sys.base_prefix))
        sites: list[Path] = []
        for entry in sys.path:
            path = Path(entry)
            # Only real package folders: never a source checkout added by a .pth file.
            if path.name in {"site-packages", "dist-packages"} and path.is_dir():
                real = Path(os.path.realpath(path))
                if real not in sites:
                    sites.append(real)
        setpriv = shutil.which("setpriv")
        return cls(python, prefix, tuple(sites), Path(setpriv) if setpriv else None)


def _ancestors(path: str) -> list[str]:
    parts = Path(path).parts[1:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


class _Binds:
    """Collects mounts; creates parent directories world-readable (bwrap makes them 0700)."""

    def __init__(self) -> None:
        self.args: list[str] = []
        self._dirs: set[str] = {"/"}

    def _parents(self, dest: str) -> None:
        for parent in _ancestors(dest):
            if parent not in self._dirs:
                self._dirs.add(parent)
                self.args += ["--perms", "0755", "--dir", parent]

    def ro(self, src: str | Path, dest: str | Path | None = None) -> None:
        src, dest = str(src), str(dest or src)
        if not os.path.exists(src):
            return
        self._parents(dest)
        if os.path.islink(src) and os.path.dirname(src) == "/":
            self.args += ["--symlink", os.readlink(src), dest]  # merged-/usr links: /lib -> usr/lib
        else:
            self.args += ["--ro-bind", src, dest]


def site_destinations(paths: RuntimePaths) -> list[tuple[Path, str]]:
    """Pair each host site-packages folder with its path inside the sandbox.

    Folders under ``/tmp`` (a venv made in a temporary checkout) are mounted
    elsewhere: the sandbox's own ``/tmp`` is a private tmpfs that would hide them.
    """
    pairs = []
    for i, site in enumerate(paths.site_packages):
        inside = f"{SANDBOX_PKG_PARENT}/site{i}" if site.is_relative_to("/tmp") else str(site)
        pairs.append((site, inside))
    return pairs


def pick_uid(policy: SandboxPolicy) -> int:
    """Return the uid for a new worker (a fresh random one unless the policy fixes it)."""
    return policy.uid if policy.uid is not None else _UID_BASE + secrets.randbelow(_UID_SPAN)


def worker_config(policy: SandboxPolicy, paths: RuntimePaths) -> dict[str, Any]:
    """The JSON configuration handed to the worker on its command line."""
    return {
        "site_packages": [inside for _, inside in site_destinations(paths)],
        "limits": {
            "as": policy.memory_bytes,
            "nproc": policy.max_processes,
            "fsize": policy.max_file_mb * MIB,
            "nofile": policy.max_open_files,
            "cpu": policy.session_cpu_s,
            "core": 0,
            "msgqueue": 0,
        },
        "max_result_bytes": policy.max_result_bytes,
        "max_repr_chars": policy.max_repr_chars,
        "max_output_chars": policy.max_output_chars,
        "max_table_bytes": policy.max_table_mb * MIB,
        "preload": list(policy.preload),
    }


def build_command(
    bwrap: str,
    policy: SandboxPolicy,
    paths: RuntimePaths,
    *,
    uid: int | None,
    seccomp_fd: int | None,
    argv: list[str],
) -> list[str]:
    """Return the full command: bwrap options, the uid drop, then ``argv`` (python ...).

    Args:
        bwrap: Path of the bubblewrap binary.
        policy: Limits (the tmpfs size is applied here, rlimits inside the worker).
        paths: Host paths to expose read-only.
        uid: Drop to this uid with setpriv (host is root); None keeps the uid.
        seccomp_fd: Inherited fd holding a compiled seccomp filter, if any.
        argv: The command run inside, starting with the interpreter path.
    """
    binds = _Binds()
    for path in ("/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/local/lib", "/usr/share/zoneinfo"):
        binds.ro(path)
    for path in ("/lib", "/lib64", "/lib32"):
        binds.ro(path)
    for path in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime"):
        binds.ro(path)
    binds.ro(paths.prefix)
    if not paths.python.is_relative_to(paths.prefix):
        binds.ro(paths.python)
    for site, inside in site_destinations(paths):
        binds.ro(site, inside)
    for extra in policy.extra_ro_paths:
        binds.ro(extra)
    if paths.setpriv is not None:
        binds.ro(os.path.realpath(paths.setpriv), paths.setpriv)
    here = Path(__file__).resolve().parent
    for name in WORKER_FILES:
        binds.ro(here / name, f"{SANDBOX_PKG_PARENT}/{SANDBOX_PKG}/{name}")
    cmd = [bwrap, "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    cmd += ["--unshare-cgroup-try", "--hostname", "sandbox", "--die-with-parent"]
    cmd += ["--new-session", "--clearenv"]
    for key, value in SANDBOX_ENV.items():
        cmd += ["--setenv", key, value]
    cmd += binds.args
    cmd += ["--proc", "/proc", "--dev", "/dev"]
    cmd += ["--perms", "1777", "--size", str(policy.tmpfs_mb * MIB), "--tmpfs", "/tmp"]
    cmd += ["--remount-ro", "/", "--chdir", "/tmp"]
    if seccomp_fd is not None:
        cmd += ["--seccomp", str(seccomp_fd)]
    cmd.append("--")
    if paths.setpriv is not None:
        cmd += [str(paths.setpriv)]
        if uid is not None:
            cmd += [f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
            cmd += ["--inh-caps=-all", "--bounding-set=-all"]
        cmd += ["--no-new-privs", "--"]
    return cmd + argv


def python_argv(paths: RuntimePaths, config: dict[str, Any]) -> list[str]:
    """The interpreter command that starts the worker package inside the sandbox."""
    boot = (
        f"import sys; sys.path.insert(0, {SANDBOX_PKG_PARENT!r}); "
        f"from {SANDBOX_PKG}.worker import main; main(sys.argv[1:])"
    )
    return [str(paths.python), "-I", "-S", "-B", "-X", "utf8", "-c", boot, json.dumps(config)]


def resolve_bwrap(policy: SandboxPolicy) -> str:
    """Return the bubblewrap path or raise :class:`SandboxUnavailableError`."""
    path = policy.bwrap_path or shutil.which("bwrap")
    if not path or not os.path.isfile(path) or not os.access(path, os.X_OK):
        where = policy.bwrap_path or "PATH"
        raise SandboxUnavailableError(f"bubblewrap (bwrap) not found in {where}. {INSTALL_HINT}")
    return path


def probe(
    cmd_prefix: list[str], python: Path, pass_fds: tuple[int, ...] = (), timeout: float = 20.0
) -> None:
    """Run a trivial program in the sandbox; raise if bubblewrap cannot set it up."""
    cmd = cmd_prefix + [str(python), "-I", "-S", "-c", "import os; print(os.getuid())"]
    try:
        proc = subprocess.run(  # noqa: S603 - fixed argv, no shell
            cmd, env=HOST_ENV, capture_output=True, timeout=timeout, check=False, pass_fds=pass_fds
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailableError(f"bubblewrap could not start: {exc}. {INSTALL_HINT}") from exc
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip()[:500]
        raise SandboxUnavailableError(
            f"bubblewrap failed to create the sandbox (exit {proc.returncode}): {err}. "
            f"{INSTALL_HINT}"
        )
    logger.debug("sandbox probe ok: uid inside = %s", proc.stdout.decode().strip())
