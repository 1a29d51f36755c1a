"""Pieces of the sandbox that need no bubblewrap: REPL cell, codec, seccomp, command line,
fail-closed behaviour."""

from __future__ import annotations

import dataclasses
import shutil
import struct
from pathlib import Path

import pandas as pd
import pydantic
import pytest

from tablerag_agents.errors import SandboxUnavailableError
from tablerag_agents.sandbox import ExecResult, Sandbox, SandboxPolicy, bwrap, cell, codec, seccomp

REPO = Path(__file__).resolve().parents[2]


def _run(code: str, ns: dict | None = None, timeout: float = 5.0, cap: int = 1000):  # noqa: ANN202
    ns = {"__builtins__": __builtins__} if ns is None else ns
    return cell.run_cell(code, ns, "<cell 1>", timeout=timeout, max_output_chars=cap)


def test_cell_returns_last_expression_and_output() -> None:
    out = _run("a = 2\nprint('a is', a)\na * 21")
    assert out.value == 42 and out.stdout == "a is 2\n" and out.error is None


def test_cell_without_final_expression_has_no_value() -> None:
    ns: dict = {"__builtins__": __builtins__}
    out = _run("x = 1\nif x:\n    y = 2", ns)
    assert out.value is None and ns["y"] == 2


def test_cell_error_has_only_cell_frames() -> None:
    out = _run("def f(d):\n    return d['k']\nf({})")
    assert out.error_type == "KeyError"
    assert out.error.splitlines() == [
        "Traceback (most recent call last):",
        '  File "<cell 1>", line 3, in <module>',
        "    f({})",
        '  File "<cell 1>", line 2, in f',
        "    return d['k']",
        "           ~^^^^^",
        "KeyError: 'k'",
    ]
    assert "cell.py" not in out.error


def test_cell_soft_timeout_and_sys_exit() -> None:
    out = _run("while True:\n    pass", timeout=0.2)
    assert out.timed_out and out.error_type == "TimeoutError" and "0.2 s" in out.error
    out = _run("import sys\nsys.exit(2)")
    assert out.error_type == "SystemExit" and out.error.endswith("SystemExit: 2")


def test_cell_output_cap() -> None:
    out = _run("for i in range(100):\n    print('0123456789')", cap=50)
    assert out.stdout.startswith("0123456789\n0123") and "[truncated: 1050 more chars" in out.stdout


def test_codec_json_and_opaque_values() -> None:
    meta, blob = codec.encode_value({"a": (1, 2.5), "b": {3, 1}}, 10_000, 100)
    assert blob == b"" and codec.decode_value(meta, blob) == {"a": [1, 2.5], "b": [1, 3]}
    meta, _ = codec.encode_value(object(), 10_000, 100)
    assert meta["kind"] == "opaque" and codec.decode_value(meta, b"") is None
    meta, _ = codec.encode_value(list(range(10_000)), 1_000, 100)
    assert meta["kind"] == "opaque" and "too large" in meta["note"]
    assert len(meta["repr"]) < 200 and "[truncated" in meta["repr"]
    # Series.unique() of a string column is an ExtensionArray: it travels as a list.
    uniques = pd.Series(["x", "y", "x", None], dtype="string").unique()
    meta, blob = codec.encode_value(uniques, 10_000, 100)
    assert meta["kind"] == "json" and codec.decode_value(meta, blob) == ["x", "y", None]


def test_codec_frames_series_and_tables_round_trip() -> None:
    df = pd.DataFrame({"x": [1, 2], "y": ["a", None]}, index=pd.Index(["r1", "r2"], name="k"))
    meta, blob = codec.encode_value(df, 1 << 20, 500)
    pd.testing.assert_frame_equal(codec.decode_value(meta, blob), df)
    meta, blob = codec.encode_value(df["x"], 1 << 20, 500)
    pd.testing.assert_series_equal(codec.decode_value(meta, blob), df["x"])
    entries, blob = codec.encode_tables({"t1": df, "t2": df.reset_index()})
    back = codec.decode_tables(entries, blob)
    pd.testing.assert_frame_equal(back["t1"], df)
    assert list(back["t2"].columns) == ["k", "x", "y"]


def test_codec_repairs_mixed_columns_and_rejects_duplicates() -> None:
    mixed = pd.DataFrame({"v": [1, "two", None]})
    safe, notes = codec.arrow_safe(mixed)
    assert safe["v"].tolist()[:2] == ["1", "two"] and pd.isna(safe["v"].iloc[2])
    assert "mixed values" in notes[0] and mixed["v"].tolist()[0] == 1  # input untouched
    assert codec.decode_tables(*codec.encode_tables({"m": mixed}))["m"]["v"].tolist()[1] == "two"
    with pytest.raises(ValueError, match="duplicate column names"):
        codec.arrow_safe(pd.DataFrame([[1, 2]], columns=["a", "a"]))


def test_seccomp_filter_shape() -> None:
    prog = seccomp.build_filter("x86_64")
    insns = [struct.unpack("=HBBI", prog[i : i + 8]) for i in range(0, len(prog), 8)]
    assert len(prog) % 8 == 0 and insns[0] == (0x20, 0, 0, 4)  # load the arch first
    assert (0x15, 0, 1, 101) in insns  # ptrace is compared, then denied
    assert insns[-1] == (0x06, 0, 0, 0x7FFF0000)  # everything else is allowed
    assert seccomp.build_filter("aarch64") != prog
    with pytest.raises(ValueError, match="no seccomp"):
        seccomp.build_filter("sparc")


def test_command_exposes_no_repo_or_home() -> None:
    paths = dataclasses.replace(bwrap.RuntimePaths.detect(), setpriv=Path("/usr/bin/setpriv"))
    policy = SandboxPolicy()
    cmd = bwrap.build_command("bwrap", policy, paths, uid=1_900_000_001, seccomp_fd=5, argv=["py"])
    sources = [Path(cmd[i + 1]) for i, arg in enumerate(cmd) if arg == "--ro-bind"]
    for src in sources:
        assert src != REPO and not REPO.is_relative_to(src) and src != Path.home()
        if src.is_relative_to(REPO):
            assert src.name in {"site-packages", *bwrap.WORKER_FILES}, src
    for flag in ("--unshare-net", "--unshare-pid", "--die-with-parent", "--clearenv"):
        assert flag in cmd
    assert "--reuid=1900000001" in cmd and "--no-new-privs" in cmd and cmd[-1] == "py"
    assert cmd[cmd.index("--seccomp") + 1] == "5"


def test_policy_is_validated() -> None:
    with pytest.raises(pydantic.ValidationError):
        SandboxPolicy(timeout_s=0)
    with pytest.raises(pydantic.ValidationError):
        SandboxPolicy(allow_network=True)


def test_fail_closed_without_bwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SandboxUnavailableError, match="apt-get install bubblewrap"):
        Sandbox(SandboxPolicy(bwrap_path="/nonexistent/bwrap"))
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    with pytest.raises(SandboxUnavailableError, match="not found"):
        Sandbox()


def test_fail_closed_when_bwrap_cannot_sandbox(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: Creating new namespace failed' >&2\nexit 1\n")
    fake.chmod(0o755)
    # (As root without setpriv, the earlier setpriv check refuses first: also fail-closed.)
    with pytest.raises(SandboxUnavailableError, match="Creating new namespace failed|setpriv"):
        Sandbox(SandboxPolicy(bwrap_path=str(fake)))


def test_observation_keeps_error_tail_and_output_head() -> None:
    res = ExecResult(False, stdout="x" * 5000, error="Trace\n" + "y" * 3000 + "\nKeyError: 'k'")
    text = res.observation(max_chars=1000)
    assert len(text) <= 1000 and text.endswith("KeyError: 'k'") and text.startswith("xxx")
    assert ExecResult(True).observation() == "(no output)"
    ok = ExecResult(True, value=3, value_repr="3", stdout="hi\n", notes=["converted"])
    assert ok.observation() == "hi\n3\n[note] converted"
