"""The sandboxed worker: a pre-warmed zygote that forks one fresh child per session.

Runs INSIDE bubblewrap, started by the host as a namespace package
``tablerag_sandbox`` (this file and its three siblings, bound read-only). The
zygote imports pandas once, then for every session receives a fresh socket over
its control socket and forks a child that owns a fresh namespace and talks to
the host over that socket only. When the child exits, the zygote kills every
other process in the sandbox, wipes ``/tmp`` and reports the exit on the control
socket (which children never hold), so nothing survives into the next session.
"""

from __future__ import annotations

import builtins
import ctypes
import gc
import json
import os
import resource
import select
import signal
import socket
import stat
import sys
import time
from typing import Any

from . import protocol

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36


def _apply_limits(limits: dict[str, int]) -> None:
    table = {
        "as": resource.RLIMIT_AS,
        "nproc": resource.RLIMIT_NPROC,
        "fsize": resource.RLIMIT_FSIZE,
        "nofile": resource.RLIMIT_NOFILE,
        "cpu": resource.RLIMIT_CPU,
        "core": resource.RLIMIT_CORE,
        "msgqueue": resource.RLIMIT_MSGQUEUE,
    }
    for name, value in limits.items():
        resource.setrlimit(table[name], (value, value))


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def _status_fields() -> dict[str, str]:
    with open("/proc/self/status") as fh:
        rows = (line.split(":", 1) for line in fh if ":" in line)
        return {k: v.strip() for k, v in rows if k in {"Seccomp", "NoNewPrivs", "CapEff", "Uid"}}


def _force_remove(path: str) -> None:
    """Delete a file or tree even if the code made it unreadable (we own it all)."""
    if stat.S_ISDIR(os.lstat(path).st_mode):
        os.chmod(path, stat.S_IRWXU)
        for name in os.listdir(path):
            _force_remove(os.path.join(path, name))
        os.rmdir(path)
    else:
        os.unlink(path)


def sweep(tmp: str = "/tmp") -> None:
    """Kill every other process in this pid namespace, reap them, and empty ``tmp``."""
    while True:
        try:
            os.kill(-1, signal.SIGKILL)  # pid namespace: spares only init and ourselves
        except (ProcessLookupError, PermissionError):
            pass
        try:
            os.waitpid(-1, 0)  # we are the subreaper, so every orphan is our child
        except ChildProcessError:
            break
    for entry in os.listdir(tmp):
        _force_remove(os.path.join(tmp, entry))


class Worker:
    """The zygote: owns the control socket, forks one session process per ``open``."""

    def __init__(self, config: dict[str, Any], ctrl: socket.socket) -> None:
        self.config = config
        self.ctrl = ctrl

    def send_ctrl(self, message: dict[str, Any]) -> None:
        """Send one control message (a single SOCK_SEQPACKET record) to the host."""
        self.ctrl.sendall(json.dumps(message).encode())

    def _fork_standby(self) -> tuple[int, socket.socket]:
        """Fork the next session process now, so it can warm up before it is needed.

        The standby has run only our own warm-up code: it touches pandas once so
        its copy-on-write page faults happen here, not while the caller waits.
        """
        parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                self.ctrl.close()  # session code must never reach the control socket
                parent_end.close()
                _standby_warm_up(child_end)
                _, fds, _, _ = socket.recv_fds(child_end, 16, 1)
                child_end.close()
                if len(fds) == 1:
                    self._session(fds[0])
                    code = 0
            finally:
                os._exit(code)
        child_end.close()
        return pid, parent_end

    def serve(self) -> None:
        """Hand each ``open`` to the standby process; after it ends, clean up and report."""
        standby = self._fork_standby()
        while True:
            data, fds, _, _ = socket.recv_fds(self.ctrl, 65536, 1)
            if not data:
                return  # the host closed the control socket
            message = json.loads(data)
            if message.get("op") != "open" or len(fds) != 1:
                for fd in fds:
                    os.close(fd)
                return
            pid, link = standby
            try:
                socket.send_fds(link, [b"s"], [fds[0]])
            except OSError:
                pass  # the standby died: the host sees the channel close and asks why
            link.close()
            os.close(fds[0])
            _, status = os.waitpid(pid, 0)
            sweep()
            signum = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
            code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
            self.send_ctrl(
                {"op": "exit", "sid": message.get("sid"), "code": code, "signal": signum}
            )
            standby = self._fork_standby()

    def _session(self, fd: int) -> None:
        import numpy as np
        import pandas as pd

        from . import codec

        try:
            message, blob = protocol.read_frame(fd, int(self.config["max_table_bytes"]))
            tables = codec.decode_tables(message["tables"], blob)
        except protocol.ProtocolError:
            return
        except Exception as exc:  # noqa: BLE001 - reported to the host as data
            protocol.write_frame(fd, {"op": "error", "error": repr(exc)[:2000]})
            return
        del blob
        namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
        namespace.update(pd=pd, np=np)
        namespace.update(tables)
        protocol.write_frame(fd, {"op": "opened"})
        runs = 0
        while True:
            try:
                request, _ = protocol.read_frame(fd, 0)
            except protocol.ProtocolError:
                return  # the host closed the session
            if request["op"] != "run":
                return
            runs += 1
            reply, value_blob = self._run(request, namespace, runs)
            protocol.write_frame(fd, reply, value_blob)

    def _run(
        self, request: dict[str, Any], namespace: dict[str, Any], runs: int
    ) -> tuple[dict[str, Any], bytes]:
        from . import cell, codec

        cfg = self.config
        timeout = float(request["timeout"])
        usage = resource.getrusage(resource.RUSAGE_SELF)
        _, cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)
        cpu_soft = int(usage.ru_utime + usage.ru_stime + timeout + 2)
        if cpu_hard != resource.RLIM_INFINITY:
            cpu_soft = min(cpu_soft, cpu_hard)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_soft, cpu_hard))
        json_cap = min(int(cfg["max_result_bytes"]), protocol.MAX_JSON_BYTES // 2)

        def finish(value: Any) -> tuple[dict[str, Any], bytes]:
            if value is not None:
                namespace["_"] = value
            return codec.encode_value(value, json_cap, int(cfg["max_repr_chars"]))

        start = time.perf_counter()
        outcome = cell.run_cell(
            str(request["code"]),
            namespace,
            f"<cell {runs}>",
            timeout=timeout,
            max_output_chars=int(cfg["max_output_chars"]),
            finish=finish,
        )
        meta, value_blob = outcome.value if outcome.value is not None else ({"kind": "none"}, b"")
        reply = {
            "op": "result",
            "value": meta,
            "stdout": outcome.stdout,
            "error": outcome.error,
            "error_type": outcome.error_type,
            "timed_out": outcome.timed_out,
            "duration_s": time.perf_counter() - start,
        }
        return reply, value_blob


def _warm_up(pd: Any) -> None:
    """Exercise common pandas paths once so forked children skip their lazy imports."""
    df = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "x"], "c": [0.5, None, 2.0]})
    df["d"] = pd.to_datetime(["2020-01-01", "2021-06-30", None])
    grouped = df.groupby("b").agg({"a": "sum", "c": "mean"}).reset_index()
    df.merge(grouped, on="b", suffixes=("", "_g")).sort_values("a").head()
    df["b"].str.upper().value_counts()
    df.describe(include="all")
    pd.pivot_table(df, index="b", values="a", aggfunc="count")
    pd.to_numeric(pd.Series(["1", "x"]), errors="coerce").isna().sum()
    repr(df), repr(df["a"]), df.to_string(), df.to_dict("records")


def _standby_warm_up(link: socket.socket) -> None:
    """Pre-fault the paths every session takes (cell, codec, pandas) in a fresh standby.

    Runs in small steps and stops as soon as a session is waiting on ``link``, so
    back-to-back sessions never wait for the warm-up.
    """
    import pandas as pd

    from . import cell, codec

    state: dict[str, Any] = {}

    def run_cell() -> None:
        frame = codec.ipc_to_frame(codec.frame_to_ipc(pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})))
        namespace: dict[str, Any] = {"__builtins__": builtins, "df": frame, "pd": pd}
        code = "print(len(df))\ndf[df['a'] > 0].groupby('b')['a'].sum()"
        outcome = cell.run_cell(code, namespace, "<warm-up>", timeout=5.0, max_output_chars=100)
        state["frame"] = codec.encode_value(outcome.value, 1 << 20, 1000)

    poller = select.poll()
    poller.register(link, select.POLLIN)
    # A caller running sessions back to back is usually already waiting: serve it first.
    for step, wait_ms in ((run_cell, 5), (lambda: _warm_up(pd), 0)):
        if poller.poll(wait_ms):
            return
        try:
            step()
        except Exception:  # noqa: BLE001, S110 - a speed-up only; the session still works
            pass


def main(argv: list[str]) -> None:
    """Entry point inside the sandbox: set limits, warm up, say hello, serve."""
    config = json.loads(argv[0])
    sys.path.extend(config["site_packages"])
    _apply_limits(config["limits"])
    ctrl = socket.socket(fileno=int(config["ctrl_fd"]))
    os.set_inheritable(ctrl.fileno(), False)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    status = _status_fields()
    _prctl(PR_SET_DUMPABLE, 0)  # no /proc/<pid>/mem or ptrace from same-uid children
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    start = time.perf_counter()
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    from . import cell, codec  # noqa: F401 - import numpy, pandas and pyarrow once, here

    for name in config.get("preload", []):
        __import__(name)
    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)
    np.set_printoptions(legacy="1.25")  # repr scalars as 3, not np.int64(3): clearer for an LLM
    pd.set_option("display.max_rows", 20, "display.max_columns", 20)
    pd.set_option("display.width", 120, "display.max_colwidth", 60)
    try:
        _warm_up(pd)
    except Exception as exc:  # noqa: BLE001 - only a speed-up; another pandas may differ
        os.write(2, f"tablerag sandbox: warm-up skipped: {exc!r}\n".encode())
    gc.collect()
    gc.freeze()  # forked children then leave the zygote's pages shared (no copy on gc)
    hello = {
        "op": "hello",
        "import_s": time.perf_counter() - start,
        "status": status,
        "python": sys.version.split()[0],
        "pandas": pd.__version__,
    }
    os.dup2(devnull, 2)  # stderr stays open until here so start-up failures reach the host
    os.close(devnull)
    worker = Worker(config, ctrl)
    worker.send_ctrl(hello)
    worker.serve()
