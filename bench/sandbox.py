"""Benchmark the sandbox: cold vs warm execution of a pandas snippet, plus the attack suite.

Cold naive = the baseline design: a fresh jailed ``python`` per call that
imports pandas, reads the table on stdin and writes Arrow on stdout. Cold = our
worker started fresh per call (adds its pandas warm-up and pre-forking). Warm
one-shot = ``Sandbox.run`` on a warm worker (a fresh forked process per call,
the table sent every call), back to back and with an untimed gap before each
call (the LLM's think time in an agent, which lets the next pre-forked process
warm up). Warm session = ``Session.run`` in one session (the table sent once).
Ratios use the faster of the two cold modes. The attack payloads come from
``tests/sandbox/attack_payloads.py``; each must be contained and be followed by
a correct normal run.

    python bench/sandbox.py --rows 10000 --cold 10 --warm 100
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _results import add_output_args, result_path, save_json

from tablerag_agents.sandbox import ExecResult, Sandbox, SandboxPolicy, codec
from tablerag_agents.sandbox.bwrap import HOST_ENV, RuntimePaths

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "bench" / "results" / "sandbox.json"
SNIPPET = (
    "hot = df[df['value'] > 0.5]\n"
    "top = hot.groupby('category')['value'].agg(['mean', 'count'])\n"
    "top.sort_values('count', ascending=False).head(5)"
)


NAIVE_SCRIPT = """
import json, sys
sys.path.extend(json.loads(sys.argv[1]))
import pandas as pd, pyarrow as pa
df = pa.ipc.open_stream(sys.stdin.buffer.read()).read_all().to_pandas()
ns = {"df": df, "pd": pd}
exec(compile(sys.argv[2].rsplit("\\n", 1)[0], "<cell>", "exec"), ns)
value = eval(sys.argv[2].rsplit("\\n", 1)[1], ns)
table = pa.Table.from_pandas(value)
sink = pa.BufferOutputStream()
with pa.ipc.new_stream(sink, table.schema) as writer:
    writer.write_table(table)
sys.stdout.buffer.write(sink.getvalue().to_pybytes())
"""


def naive_cold_call(sb: Sandbox, df: pd.DataFrame) -> Any:
    """The baseline design: one fresh jailed ``python`` per call that imports pandas,
    reads the table on stdin, runs the snippet and writes Arrow on stdout."""
    sites = json.dumps([str(p) for p in sb._paths.site_packages])
    argv = [str(sb._paths.python), "-I", "-S", "-B", "-c", NAIVE_SCRIPT, sites, SNIPPET]
    fd = sb._with_filter_fd()
    try:
        cmd = sb._command(argv, fd)
        proc = subprocess.run(  # noqa: S603 - fixed argv
            cmd,
            input=codec.frame_to_ipc(df),
            capture_output=True,
            env=HOST_ENV,
            pass_fds=(fd,) if fd is not None else (),
            check=True,
        )
    finally:
        if fd is not None:
            os.close(fd)
    return ExecResult(True, value=codec.ipc_to_frame(proc.stdout))


def make_table(rows: int, seed: int = 0) -> pd.DataFrame:
    """A synthetic table: ids, 20 categories, floats, dates."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "id": np.arange(rows),
            "category": rng.choice([f"cat{i:02d}" for i in range(20)], size=rows),
            "value": rng.random(rows),
            "day": pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 365, rows), "D"),
        }
    )


def reference(df: pd.DataFrame) -> pd.DataFrame:
    """What SNIPPET computes, done on the host to check every sandboxed answer."""
    top = df[df["value"] > 0.5].groupby("category")["value"].agg(["mean", "count"])
    return top.sort_values("count", ascending=False).head(5)


def summarize(times: list[float]) -> dict[str, float]:
    """p50/p95/mean in milliseconds."""
    ms = sorted(t * 1000 for t in times)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    p50, mean = statistics.median(ms), statistics.fmean(ms)
    return {"n": len(ms), "p50_ms": p50, "p95_ms": p95, "mean_ms": mean}


def timed_runs(fn: Any, n: int, expected: pd.DataFrame, gap: float = 0.0) -> list[float]:
    """Call ``fn`` n times (``gap`` s apart, untimed), check each result, return wall times."""
    times = []
    for _ in range(n):
        time.sleep(gap)
        start = time.perf_counter()
        res = fn()
        times.append(time.perf_counter() - start)
        if not res.ok:
            raise RuntimeError(f"benchmark snippet failed: {res.error}")
        pd.testing.assert_frame_equal(res.value, expected)
    return times


def bench_speed(rows: int, n_cold: int, n_warm: int, gap: float) -> dict[str, Any]:
    """Measure cold, warm one-shot and warm session latencies in one run."""
    df = make_table(rows)
    expected = reference(df)
    tables = {"df": df}

    cold_policy = SandboxPolicy(prewarm=False, max_runs_per_worker=1, max_workers=1)
    with Sandbox(cold_policy) as cold_sb:
        cold = timed_runs(lambda: cold_sb.run(SNIPPET, tables), n_cold, expected)
        cold_started = cold_sb.stats.workers_started

    with Sandbox() as sb:
        naive = timed_runs(lambda: naive_cold_call(sb, df), n_cold, expected)
        sb.run("1")  # wait for the pre-warmed worker to finish importing pandas
        oneshot = timed_runs(lambda: sb.run(SNIPPET, tables), n_warm, expected)
        oneshot_gap = timed_runs(lambda: sb.run(SNIPPET, tables), n_warm, expected, gap)
        with sb.session(tables) as session:
            session_times = timed_runs(lambda: session.run(SNIPPET), n_warm, expected)
        hello = next(iter(sb._all)).hello or {}

    out = {
        "rows": rows,
        "snippet": SNIPPET,
        "cold_naive": summarize(naive),
        "cold": summarize(cold),
        "cold_workers_started": cold_started,
        "warm_oneshot": summarize(oneshot),
        "warm_oneshot_with_gap": summarize(oneshot_gap),
        "gap_s": gap,
        "warm_session": summarize(session_times),
        "worker_import_s": hello.get("import_s"),
        "worker_status": hello.get("status"),
    }
    # Ratios use the naive cold call (no warm-up work): the smaller, honest baseline.
    cold_p50 = min(out["cold"]["p50_ms"], out["cold_naive"]["p50_ms"])
    out["cold_baseline_p50_ms"] = cold_p50
    out["ratio_cold_over_warm_session_p50"] = cold_p50 / out["warm_session"]["p50_ms"]
    out["ratio_cold_over_warm_oneshot_p50"] = cold_p50 / out["warm_oneshot"]["p50_ms"]
    out["ratio_cold_over_warm_oneshot_gap_p50"] = cold_p50 / out["warm_oneshot_with_gap"]["p50_ms"]
    return out


def bench_attacks() -> dict[str, Any]:
    """Run every attack payload; count those contained (check passes, sandbox still works)."""
    sys.path.insert(0, str(ROOT / "tests" / "sandbox"))
    from attack_kit import attack_context, check_normal, host_alive, run_attack
    from attack_payloads import ATTACKS

    policy = SandboxPolicy(timeout_s=2.0, kill_grace_s=1.0)
    rows = []
    with attack_context(RuntimePaths.detect().site_packages[0]) as ctx, Sandbox(policy) as sb:
        ctx.timeout, ctx.grace, ctx.max_processes = policy.timeout_s, policy.kill_grace_s, 16
        for attack in ATTACKS:
            start = time.perf_counter()
            try:
                results = run_attack(sb, attack, ctx)
                attack.check(results, ctx)
                host_alive(ctx)
                check_normal(sb)
                verdict, detail = "contained", results[-1].error_type or "ok"
            except Exception as exc:  # noqa: BLE001 - a failure is a finding to report
                verdict, detail = "NOT CONTAINED", "".join(traceback.format_exception_only(exc))
            elapsed = time.perf_counter() - start
            row = {"name": attack.name, "verdict": verdict, "detail": detail[:300], "s": elapsed}
            rows.append(row)
    contained = sum(r["verdict"] == "contained" for r in rows)
    return {"total": len(rows), "contained": contained, "payloads": rows}


def main() -> None:
    """Parse arguments, run the benchmark, print a summary and save JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000, help="rows in the table")
    parser.add_argument("--cold", type=int, default=10, help="cold calls")
    parser.add_argument("--warm", type=int, default=100, help="warm calls per mode")
    parser.add_argument(
        "--gap",
        type=float,
        default=0.1,
        help="untimed pause before each call in the 'with gap' mode (an agent's LLM think time)",
    )
    parser.add_argument("--skip-attacks", action="store_true", help="only measure speed")
    add_output_args(parser, DEFAULT_OUT)
    args = parser.parse_args()
    out = result_path(DEFAULT_OUT, args.out, force=args.force)

    result: dict[str, Any] = {"load_avg_before": os.getloadavg(), "cpus": os.cpu_count()}
    result["speed"] = speed = bench_speed(args.rows, args.cold, args.warm, args.gap)
    if not args.skip_attacks:
        result["attacks"] = bench_attacks()
    result["load_avg_after"] = os.getloadavg()
    warm_p50 = speed["warm_session"]["p50_ms"]
    result["targets"] = {
        "warm_session_p50_le_50ms": warm_p50 <= 50,
        "warm_oneshot_p50_le_50ms": speed["warm_oneshot"]["p50_ms"] <= 50,
        "ratio_session_ge_20x": speed["ratio_cold_over_warm_session_p50"] >= 20,
        "ratio_oneshot_ge_20x": speed["ratio_cold_over_warm_oneshot_p50"] >= 20,
        "ratio_oneshot_with_gap_ge_20x": speed["ratio_cold_over_warm_oneshot_gap_p50"] >= 20,
    }

    print(f"sandbox benchmark: {args.rows}-row table, load avg {result['load_avg_before'][0]:.1f}")
    for mode in ("cold_naive", "cold", "warm_oneshot", "warm_oneshot_with_gap", "warm_session"):
        s = speed[mode]
        print(f"  {mode:22s} n={s['n']:4d}  p50 {s['p50_ms']:8.1f} ms  p95 {s['p95_ms']:8.1f} ms")
    print(
        f"  cold/warm p50: session {speed['ratio_cold_over_warm_session_p50']:.0f}x, "
        f"one-shot {speed['ratio_cold_over_warm_oneshot_p50']:.0f}x, "
        f"one-shot with {args.gap:g} s gap {speed['ratio_cold_over_warm_oneshot_gap_p50']:.0f}x"
    )
    print(f"  targets: {result['targets']}")
    if "attacks" in result:
        att = result["attacks"]
        print(f"  attacks contained: {att['contained']}/{att['total']}")
        for row in att["payloads"]:
            if row["verdict"] != "contained":
                print(f"    NOT CONTAINED {row['name']}: {row['detail']}")
    save_json(out, result)
    print(f"  saved {out}")


if __name__ == "__main__":
    main()
