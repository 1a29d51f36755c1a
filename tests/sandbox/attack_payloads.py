"""Hostile payloads and the specific outcome that proves each was contained.

Used by ``test_attacks.py`` and ``bench/sandbox.py``; helpers live in ``attack_kit.py``.
"""

from __future__ import annotations

from pathlib import Path

from attack_kit import (
    READ_ERRORS,
    WRITE_ERRORS,
    Attack,
    AttackContext,
    failed,
    host_alive,
    host_missing,
    no_connection,
    no_leak,
    timed,
)

from tablerag_agents.sandbox import ExecResult

R = list[ExecResult]
C = AttackContext


def _read_denied(rs: R, c: C) -> None:
    failed(rs[0], *READ_ERRORS)
    no_leak(rs[0], c.home_secret, "root:x:0", "[project]")


def _write_denied(target: str) -> object:
    def check(rs: R, c: C) -> None:
        failed(rs[0], *WRITE_ERRORS)
        host_missing(
            Path(target.replace("$repo", str(c.repo)).replace("$sp", str(c.site_packages)))
        )

    return check


def _list_home(rs: R, c: C) -> None:
    assert c.home_canary.name not in rs[0].observation(10**6), "host home is visible"


def _environ(rs: R, c: C) -> None:
    allowed = {"HOME", "TMPDIR", "LANG", "PATH", "PWD", "LC_CTYPE"}
    allowed |= {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"}
    allowed |= {"ARROW_DEFAULT_MEMORY_POOL"}
    assert rs[0].ok and isinstance(rs[0].value, dict), rs[0]
    assert c.env_name not in rs[0].value and set(rs[0].value) <= allowed, rs[0].value
    no_leak(rs[0], c.env_secret)


def _proc1_environ(rs: R, c: C) -> None:
    # As root, pid 1 (bwrap) belongs to root: unreadable. Without root, bwrap runs as our
    # uid and its environment is readable, but the host starts it with PATH and LANG only.
    if rs[0].ok:
        keys = {item.split("=", 1)[0] for item in rs[0].value.split("\0") if item}
        assert keys <= {"PATH", "LANG"}, keys
        no_leak(rs[0], c.env_secret, c.env_name)
    else:
        failed(rs[0], "PermissionError")


def _pids(rs: R, c: C) -> None:
    assert rs[0].ok and len(rs[0].value) <= 4, f"host processes visible: {rs[0].value}"


def _loopback(rs: R, c: C) -> None:
    failed(rs[0], "ConnectionRefusedError", "OSError")
    no_connection(c)


def _fork_bomb(rs: R, c: C) -> None:
    assert rs[0].ok, rs[0]
    count, err = rs[0].value
    assert count < c.max_processes and err == "BlockingIOError", rs[0].value


def _thread_bomb(rs: R, c: C) -> None:
    assert rs[0].ok, rs[0]
    count, err = rs[0].value
    assert count < c.max_processes and err == "RuntimeError", rs[0].value


def _memory(rs: R, c: C) -> None:
    assert not rs[0].ok and (rs[0].error_type or "").endswith("MemoryError"), rs[0]


def _huge_output(rs: R, c: C) -> None:
    out = rs[0].stdout
    assert rs[0].ok and len(out) <= c.max_output_chars + 100 and "[truncated" in out, len(out)


def _huge_value(rs: R, c: C) -> None:
    res = rs[0]
    assert res.ok and res.value is None and len(res.value_repr) <= c.max_repr_chars + 100
    assert any("too large" in note for note in res.notes), res.notes


def _killed_own_sandbox(rs: R, c: C) -> None:
    assert rs[0].error_type in (None, "SandboxCrash", "ProcessKilled"), rs[0]
    host_alive(c)


def _module_not_planted(rs: R, c: C) -> None:
    assert rs[0].ok and "evil_mod.py" in rs[0].value, rs[0]
    failed(rs[1], "ModuleNotFoundError")
    assert rs[2].ok and rs[2].value == [], f"/tmp not wiped between sessions: {rs[2].value}"


def _poison(rs: R, c: C) -> None:
    # Poisoned builtins may also break the worker's own reply: that only hurts this session.
    poisoned = rs[0].ok and rs[0].value == [42, "poisoned"]
    assert poisoned or rs[0].error_type == "SandboxCrash", rs[0]
    assert rs[1].ok and rs[1].value == [3, 6, "1"], f"state leaked across sessions: {rs[1]}"


def _daemon(rs: R, c: C) -> None:
    assert rs[0].ok and rs[0].value == "forked", rs[0]
    pids, marker = rs[1].value
    assert not marker and len(pids) <= 3, f"a process outlived its session: {rs[1].value}"


def _os_system(rs: R, c: C) -> None:
    assert rs[0].ok and isinstance(rs[0].value, int) and rs[0].value != 0, rs[0]
    no_leak(rs[0], c.home_secret)


def _child_python(rs: R, c: C) -> None:
    assert rs[0].ok and rs[0].value == "", rs[0]
    no_leak(rs[0], c.home_secret)


def _value(expected: object) -> object:
    def check(rs: R, c: C) -> None:
        assert rs[0].ok and rs[0].value == expected, f"expected {expected!r}, got {rs[0]}"

    return check


def _forgery(rs: R, c: C) -> None:
    failed(rs[0], "SandboxCrash")


def _undecodable(reason: str) -> object:
    def check(rs: R, c: C) -> None:
        notes = " ".join(rs[0].notes)
        assert rs[0].value is None and "could not be decoded" in notes and reason in notes, rs[0]

    return check


def _wrong_types(rs: R, c: C) -> None:
    res = rs[0]
    assert res.ok and res.value == 1 and res.value_repr == "['a']" and res.stdout == "7", res
    assert res.timed_out is False and res.value_type == "5" and res.notes == ["{'n': 1}"], res


def _disk(message: str) -> object:
    def check(rs: R, c: C) -> None:
        failed(rs[0], "OSError")
        assert message in (rs[0].error or ""), rs[0].error

    return check


PRIVILEGED = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
[libc.setuid(0), libc.unshare(0x10000000), libc.mount(b"none", b"/tmp", b"tmpfs", 0, None),
 libc.chroot(b"/tmp")]
"""
PTRACE = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
rc = libc.ptrace(16, os.getppid(), 0, 0)
try:
    open(f"/proc/{os.getppid()}/mem", "rb").read(1)
    mem = "read"
except OSError as exc:
    mem = type(exc).__name__
[rc, mem]
"""
IPC = """
import ctypes, platform
libc = ctypes.CDLL(None, use_errno=True)
add_key = {"x86_64": 248, "aarch64": 217}[platform.machine()]
[libc.syscall(add_key, b"user", b"k", b"v", 1, -3), libc.shmget(0, 4096, 0o1600),
 libc.msgget(0, 0o1600), libc.semget(0, 1, 0o1600)]
"""
FORK_BOMB = """
import os, time
n, err = 0, None
try:
    for _ in range(10_000):
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        n += 1
except OSError as exc:
    err = type(exc).__name__
[n, err]
"""
THREAD_BOMB = """
import threading, time
n, err = 0, None
try:
    for _ in range(10_000):
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
        n += 1
except RuntimeError as exc:
    err = type(exc).__name__
[n, err]
"""
DAEMON = """
import os, time
if os.fork() == 0:
    os.setsid()
    while True:
        open("/tmp/daemon_was_here", "w").close()
        time.sleep(0.05)
"forked"
"""
FORGE = r"""
import json, os, struct
def forge(message, blob=b"", body=None):
    body = body if body is not None else json.dumps(message).encode()
    frame = struct.pack(">II", len(body), len(blob)) + body + blob
    for fd in range(3, 32):
        try:
            os.write(fd, frame)
        except OSError:
            pass
    os._exit(0)
"""
FORGED_FRAME = FORGE + "forge({'op': 'result', 'value': {'kind': 'frame'}}, b'\\x00' * 64)"
COMPRESSION_BOMB = FORGE + (
    "import pyarrow as pa\n"
    "t = pa.table({'a': pa.array(np.zeros(10_000_000, dtype='int64'))})\n"
    "sink = pa.BufferOutputStream()\n"
    "opts = pa.ipc.IpcWriteOptions(compression='zstd')\n"
    "with pa.ipc.new_stream(sink, t.schema, options=opts) as w:\n"
    "    w.write_table(t)\n"
    "forge({'op': 'result', 'value': {'kind': 'frame'}}, sink.getvalue().to_pybytes())"
)
NULL_BOMB = FORGE + (
    "import pyarrow as pa\n"
    "t = pa.table({'a': pa.nulls(2_000_000_000)})\n"
    "sink = pa.BufferOutputStream()\n"
    "with pa.ipc.new_stream(sink, t.schema) as w:\n"
    "    w.write_table(t)\n"
    "forge({'op': 'result', 'value': {'kind': 'series'}}, sink.getvalue().to_pybytes())"
)
DEEP_JSON = FORGE + "forge(None, body=b'[' * 500_000)"
WRONG_TYPES = FORGE + (
    "forge({'op': 'result', 'stdout': 7, 'error': None, 'timed_out': 'yes',"
    " 'value': {'kind': 'json', 'json': 1, 'repr': ['a'], 'type': 5, 'note': {'n': 1}}})"
)
GARBAGE = r"""
import os
for fd in range(3, 32):
    try:
        os.write(fd, b"\xff" * 64)
    except OSError:
        pass
"""

PLANT = [
    "open('/tmp/evil_mod.py', 'w').write('PWNED = 1')\nimport os\nos.listdir('/tmp')",
    "import sys\nsys.path.insert(0, '/tmp')\nimport evil_mod",
    "import os\nos.listdir('/tmp')",
]
POISON = [
    "import builtins, sys\nbuiltins.len = lambda obj: 42\n"
    "pd.DataFrame.sum = lambda self, *a, **k: 'poisoned'\nsys.modules['json'] = None\n"
    "[len([1]), df.sum()]",
    "import json\n[len([1, 2, 3]), int(df['a'].sum()), json.dumps(1)]",
]
AFTER_DAEMON = (
    "import os, time\ntime.sleep(0.3)\n"
    "[sorted(int(p) for p in os.listdir('/proc') if p.isdigit()), "
    "os.path.exists('/tmp/daemon_was_here')]"
)
CHILD_PYTHON = (
    "import subprocess, sys\n"
    "cmd = [sys.executable, '-c', 'print(open(\"$home_canary\").read())']\n"
    "subprocess.run(cmd, capture_output=True, text=True).stdout"
)
UNSTOPPABLE = (
    "import signal, time\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
    "while True:\n    time.sleep(0.1)"
)
PIDS = "import os\nsorted(int(p) for p in os.listdir('/proc') if p.isdigit())"
FILL = "for i in range(100):\n    open(f'/tmp/fill{i}', 'wb').write(b'x' * (8 * 1024**2))"


def _raises(*types: str) -> object:
    def check(rs: R, c: C) -> None:
        failed(rs[0], *types)

    return check


def A(name: str, steps: str | list[str], check: object) -> Attack:  # noqa: N802
    """Shorthand constructor keeping the table below readable."""
    return Attack(name, [steps] if isinstance(steps, str) else steps, check)  # type: ignore[arg-type]


ATTACKS: list[Attack] = [
    # Files: secrets and code on the host are invisible, nothing outside /tmp is writable.
    A("read_etc_shadow", "open('/etc/shadow').read()", _read_denied),
    A("read_repo_file", "open('$repo/pyproject.toml').read()", _read_denied),
    A("read_host_home_canary", "open('$home_canary').read()", _read_denied),
    A("pandas_read_host_file", "pd.read_csv('$home_canary')", _read_denied),
    A("list_host_home", "import os\ntry:\n    os.listdir('$home')\nexcept OSError: 0", _list_home),
    A("import_host_package", "import tablerag_agents", _raises("ModuleNotFoundError")),
    A(
        "write_site_packages",
        "open('$site_packages/evil.pth', 'w').write('x')",
        _write_denied("$sp/evil.pth"),
    ),
    A(
        "write_etc",
        "open('/etc/tablerag_evil', 'w').write('x')",
        _write_denied("/etc/tablerag_evil"),
    ),
    A("write_repo", "open('$repo/evil.py', 'w').write('x')", _write_denied("$repo/evil.py")),
    A("pandas_to_pickle_host", "df.to_pickle('$repo/evil.pkl')", _write_denied("$repo/evil.pkl")),
    A("fill_tmp", FILL, _disk("No space left")),
    A("big_file", "open('/tmp/big', 'wb').write(b'x' * (64 * 1024**2))", _disk("File too large")),
    # Environment and processes of the host.
    A("proc_1_environ", "open('/proc/1/environ', 'rb').read().decode()", _proc1_environ),
    A("environment_leak", "import os\ndict(os.environ)", _environ),
    A("host_processes_visible", PIDS, _pids),
    # Network.
    A(
        "connect_host_loopback",
        "import socket\nsocket.create_connection(('127.0.0.1', $port), 2)",
        _loopback,
    ),
    A(
        "connect_internet",
        "import socket\nsocket.create_connection(('1.1.1.1', 443), 2)",
        _raises("OSError"),
    ),
    A("dns_lookup", "import socket\nsocket.getaddrinfo('pypi.org', 443)", _raises("gaierror")),
    # Resources.
    A("fork_bomb", FORK_BOMB, _fork_bomb),
    A("thread_bomb", THREAD_BOMB, _thread_bomb),
    A("memory_bomb", "x = bytearray(8 * 1024**3)", _memory),
    A("numpy_memory_bomb", "np.ones((100_000, 100_000))", _memory),
    A(
        "memory_growth",
        # np.empty reserves without touching pages: the address-space limit trips at once.
        "chunks = []\nwhile True:\n    chunks.append(np.empty(64 * 1024**2, dtype='uint8'))",
        _memory,
    ),
    A("infinite_loop", "while True:\n    pass", timed(1.5)),
    A("unstoppable_loop", UNSTOPPABLE, timed(2.5)),
    A("huge_output", "for _ in range(2000):\n    print('x' * 10_000)", _huge_output),
    A("huge_value", "'y' * 100_000_000", _huge_value),
    # Programs and raw system calls.
    A(
        "subprocess_shell_tools",
        "import subprocess\nsubprocess.run(['cat', '$home_canary'])",
        _raises("FileNotFoundError"),
    ),
    A("os_system", "import os\nos.system('cat $home_canary')", _os_system),
    A("child_python_reads_host", CHILD_PYTHON, _child_python),
    A("ctypes_privileged_calls", PRIVILEGED, _value([-1, -1, -1, -1])),
    A("ptrace_zygote", PTRACE, _value([-1, "PermissionError"])),
    A("keyring_and_sysv_ipc", IPC, _value([-1, -1, -1, -1])),
    # Signals.
    A(
        "kill_parent",
        "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)",
        _killed_own_sandbox,
    ),
    A("kill_everything", "import os, signal\nos.kill(-1, signal.SIGKILL)", _killed_own_sandbox),
    A(
        "kill_host_process",
        "import os, signal\ntry:\n    os.kill($sentinel_pid, 9)\nexcept OSError: 0",
        lambda rs, c: host_alive(c),
    ),
    # The channel back to the host.
    A("protocol_garbage", GARBAGE, _forgery),
    A("forged_result_frame", FORGED_FRAME, _undecodable("Arrow")),
    A("arrow_decompression_bomb", COMPRESSION_BOMB, _undecodable("compressed")),
    A("arrow_null_column_bomb", NULL_BOMB, _undecodable("cells exceeds")),
    A("deeply_nested_json_frame", DEEP_JSON, _forgery),
    A("forged_frame_wrong_types", WRONG_TYPES, _wrong_types),
    # State that could survive into the next session.
    A("plant_module_for_next_session", PLANT, _module_not_planted),
    A("poison_builtins_and_pandas", POISON, _poison),
    A("daemon_outlives_session", [DAEMON, AFTER_DAEMON], _daemon),
]
