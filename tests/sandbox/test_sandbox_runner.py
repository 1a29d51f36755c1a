"""Normal behaviour of the sandbox: REPL values, data round-trips, sessions, recycling."""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

from tablerag_agents.errors import SandboxError
from tablerag_agents.sandbox import Sandbox, SandboxPolicy

pytestmark = pytest.mark.sandbox

DF = pd.DataFrame(
    {
        "i": [1, 2, 3],
        "f": [1.5, np.nan, -2.25],
        "s": ["alpha", None, "gamma"],
        "t": pd.to_datetime(["2021-01-02 00:00", None, "2023-12-31 08:30"]),
        "b": [True, False, True],
        "c": pd.Categorical(["x", "y", "x"]),
        "weird name; DROP TABLE --": ["a", "b", "c"],
    }
)


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(SandboxPolicy(timeout_s=5.0, max_workers=2)) as sandbox:
        yield sandbox


def test_last_expression_value_and_print(sb: Sandbox) -> None:
    res = sb.run("x = 20\nprint('half', x // 2)\nx + 1")
    assert res.ok and res.value == 21 and res.value_repr == "21"
    assert res.stdout == "half 10\n" and res.error is None and res.value_type == "int"
    assert res.observation() == "half 10\n21"


def test_statements_only_give_no_value(sb: Sandbox) -> None:
    res = sb.run("y = [1, 2]\nfor v in y:\n    print(v)")
    assert res.ok and res.value is None and res.value_repr == "" and res.stdout == "1\n2\n"


def test_dataframe_round_trip_keeps_dtypes(sb: Sandbox) -> None:
    res = sb.run("df", {"df": DF})
    assert res.ok and isinstance(res.value, pd.DataFrame)
    pd.testing.assert_frame_equal(res.value, DF)
    assert str(res.value["t"].dtype).startswith("datetime64")
    assert np.isnan(res.value["f"].iloc[1]) and pd.isna(res.value["s"].iloc[1])


def test_tables_seen_inside_with_their_dtypes(sb: Sandbox) -> None:
    res = sb.run("{c: str(t) for c, t in df.dtypes.items()}", {"df": DF})
    assert res.ok and res.value == {c: str(t) for c, t in DF.dtypes.items()}


def test_series_and_filtered_frame_come_back_as_pandas(sb: Sandbox) -> None:
    res = sb.run("df.groupby('c', observed=True)['i'].sum()", {"df": DF})
    assert isinstance(res.value, pd.Series) and res.value.name == "i"
    assert res.value.to_dict() == {"x": 4, "y": 2}
    res = sb.run("df[df['i'] > 1][['i', 's']]", {"df": DF})
    assert res.value.index.tolist() == [1, 2] and res.value["i"].tolist() == [2, 3]


def test_plain_data_values(sb: Sandbox) -> None:
    res = sb.run(
        "{'n': np.int64(7), 'm': np.float64(0.5), 'l': (1, 'a'), 'ts': df['t'][0]}", {"df": DF}
    )
    assert res.value == {"n": 7, "m": 0.5, "l": [1, "a"], "ts": "2021-01-02T00:00:00"}
    assert type(res.value["n"]) is int


def test_numpy_scalars_repr_plainly(sb: Sandbox) -> None:
    res = sb.run("[np.int64(3), np.float64(0.5)], np.int64(4)")
    assert res.value_repr == "([3, 0.5], 4)" and res.value == [[3, 0.5], 4]


def test_worker_reports_its_confinement(sb: Sandbox) -> None:
    assert sb.run("1").ok
    worker = next(iter(sb._all))
    status = worker.hello["status"]
    assert status["NoNewPrivs"] == "1" and status["Seccomp"] == "2"
    assert int(status["CapEff"], 16) == 0 and status["Uid"].split()[0] != "0"


def test_non_data_value_comes_back_as_repr_only(sb: Sandbox) -> None:
    res = sb.run("def f():\n    return 1\nf")
    assert res.ok and res.value is None and res.value_repr.startswith("<function f")
    assert any("not transferable" in note for note in res.notes)


def test_short_traceback_shows_only_user_frames(sb: Sandbox) -> None:
    res = sb.run("a = 1\ndf['missing_col']", {"df": DF})
    assert not res.ok and res.error_type == "KeyError"
    assert 'File "<cell 1>", line 2' in res.error and "df['missing_col']" in res.error
    assert res.error.strip().endswith("KeyError: 'missing_col'")
    assert "site-packages" not in res.error and "pandas/core" not in res.error
    assert "KeyError: 'missing_col'" in res.observation()


def test_syntax_error_is_reported(sb: Sandbox) -> None:
    res = sb.run("x = (1,\nprint(x")
    assert not res.ok and res.error_type == "SyntaxError" and "<cell 1>" in res.error


def test_session_keeps_namespace_and_tables(sb: Sandbox) -> None:
    with sb.session({"df": DF}) as s:
        r1 = s.run("x = int(df['i'].sum())\ndf['j'] = df['i'] * 2")
        r2 = s.run("x * 2, int(df['j'].sum())")
        r3 = s.run("_")
    assert r1.ok and r1.value is None
    assert r2.value == [12, 12] and r3.value == [12, 12]
    assert "j" not in DF.columns  # the host's DataFrame is untouched


def test_sessions_are_isolated(sb: Sandbox) -> None:
    with sb.session({"df": DF}) as a, sb.session({"df": DF.head(1)}) as b:
        assert a.run("secret = 'A'\nlen(df)").value == 3
        assert b.run("len(df)").value == 1
        missing = b.run("secret")
        assert missing.error_type == "NameError"
        assert a.run("secret").value == "A"
    assert sb.run("secret").error_type == "NameError"


def test_one_shot_runs_do_not_share_state(sb: Sandbox) -> None:
    assert sb.run("import builtins\nbuiltins.leak = 1\nleak").value == 1
    assert sb.run("leak").error_type == "NameError"


def test_soft_timeout_keeps_session_state(sb: Sandbox) -> None:
    with sb.session() as s:
        s.run("kept = 41")
        start = time.monotonic()
        res = s.run("while True:\n    pass", timeout=0.5)
        assert res.timed_out and res.error_type == "TimeoutError" and not res.ok
        assert time.monotonic() - start < 3.0
        after = s.run("kept + 1")
    assert after.value == 42 and after.notes == []


def test_hard_timeout_restarts_session(sb: Sandbox) -> None:
    code = "import signal, time\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
    code += "time.sleep(30)"
    with sb.session({"df": DF}) as s:
        s.run("kept = 1")
        start = time.monotonic()
        res = s.run(code, timeout=0.5)
        assert res.timed_out and res.error_type == "TimeoutError"
        assert time.monotonic() - start < 0.5 + sb.policy.kill_grace_s + 2.0
        after = s.run("len(df), 'kept' in globals()")
    assert after.value == [3, False]
    assert any("restarted" in note for note in after.notes)
    assert "restarted" in after.observation()


def test_crash_of_session_process_is_reported(sb: Sandbox) -> None:
    with sb.session() as s:
        res = s.run("import os\nos._exit(7)")
        assert res.error_type == "ProcessExit" and "status 7" in res.error
        assert s.run("1 + 1").value == 2


def test_output_is_capped(sb: Sandbox) -> None:
    res = sb.run("print('z' * 50_000)")
    cap = sb.policy.max_output_chars
    assert res.ok and len(res.stdout) < cap + 100 and "[truncated: 40001 more chars" in res.stdout


def test_mixed_columns_are_converted_with_a_note(sb: Sandbox) -> None:
    mixed = pd.DataFrame({"v": [1, "two", None]})
    with sb.session({"t": mixed}) as s:
        first = s.run("t['v'].tolist()")
        second = s.run("1")
    assert first.value[:2] == ["1", "two"] and pd.isna(first.value[2])
    assert first.notes == ["t: columns ['v'] had mixed values; converted to str"]
    assert second.notes == []


def test_invalid_table_names_are_rejected(sb: Sandbox) -> None:
    for bad in ("not valid", "class", "pd", "__x", "1abc"):
        with pytest.raises(ValueError, match="table name"):
            sb.run("1", {bad: DF})


def test_workers_are_recycled_after_n_runs() -> None:
    policy = SandboxPolicy(max_runs_per_worker=2, max_workers=1)
    with Sandbox(policy) as sandbox:
        # The zygote's start time (in clock ticks since boot) tells workers apart.
        stat = "open(f'/proc/{os.getppid()}/stat').read()"
        code = f"import os\n[int({stat}.split()[21]), os.getuid()]"
        starts, uids = zip(*(sandbox.run(code).value for _ in range(5)), strict=True)
        assert starts[0] == starts[1] < starts[2] == starts[3] < starts[4], starts
        assert sandbox.stats.workers_retired == 2 and sandbox.stats.workers_started == 3
        if os.geteuid() == 0:  # as root, each worker also gets its own random uid
            assert len(set(uids)) == 3 and min(uids) >= 1_900_000_000


def test_table_too_big_for_memory_limit_is_a_clear_error() -> None:
    big = pd.DataFrame({"a": np.zeros(120 * 1024 * 1024 // 8)})
    with Sandbox(SandboxPolicy(memory_mb=256, max_workers=1)) as sandbox:
        with pytest.raises(SandboxError, match=r"could not load the tables.*memory_mb"):
            sandbox.run("len(df)", {"df": big})
        assert sandbox.run("len(df)", {"df": big.head(5)}).value == 5


def test_closed_sandbox_refuses_work() -> None:
    sandbox = Sandbox(SandboxPolicy(prewarm=False))
    session = sandbox.session()
    assert session.run("1").value == 1
    sandbox.close()
    with pytest.raises(SandboxError, match="closed"):
        sandbox.run("1")
    with pytest.raises(SandboxError, match="closed"):
        session.run("2")


def test_threads_share_the_pool_safely(sb: Sandbox) -> None:
    def job(n: int) -> list[int]:
        with sb.session({"df": DF.head(n % 3 + 1)}) as s:
            s.run(f"x = {n}")
            return [s.run("x * 10").value, s.run("len(df)").value]

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(job, range(12)))
    assert results == [[n * 10, n % 3 + 1] for n in range(12)]


def test_forgotten_session_releases_its_worker() -> None:
    with Sandbox(SandboxPolicy(max_workers=1, acquire_timeout_s=5)) as sandbox:
        session = sandbox.session()
        assert session.run("1").value == 1
        del session  # never closed: the finalizer must free the only worker
        gc.collect()
        assert sandbox.run("2").value == 2
