"""Measure what each hostile input of issue 21 (items 1, 2, 4, 5) costs, before and after.

Builds the inputs (``tests/security/hostile_files.py``, at the sizes of the
issue), then loads each one (or runs the SQL) in a fresh Python process that
imports ``tablerag_agents`` from ``--code`` (default: this checkout), under an
address-space cap (``--cap-gb``) and a timeout. Recorded per input: the outcome
(error type, limit, message, or "killed at limit"), seconds, the peak RSS of
the host process (``VmHWM``) and, when the code has bounded workers, of the
worker (its ``VmHWM`` sampled every 20 ms). Results are merged into
``bench/results/hostile_inputs.json`` under ``--label``.

    python bench/hostile_inputs.py --label after --cpu-seconds 10 --wall-seconds 30
    python bench/hostile_inputs.py --label before --code /path/to/old/checkout
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "security"))

import hostile_files as hostile  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "hostile_inputs.json"

_RUNNER = r"""
import json, os, resource, sys, threading, time, warnings
cap = int(sys.argv[3])
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
kind, target, limits = sys.argv[1], sys.argv[2], json.loads(sys.argv[4])

def hwm(pid="self"):
    try:
        with open(f"/proc/{pid}/status") as fh:
            return next(int(x.split()[1]) * 1024 for x in fh if x.startswith("VmHWM"))
    except (OSError, StopIteration):
        return 0

import pandas as pd
from tablerag_agents.tables import load_table
from tablerag_agents.solve.sql_engine import SafeDuckDB
try:
    from tablerag_agents.bounded.pool import default_pool
    from tablerag_agents.tables.limits import LoadLimits
except ImportError:  # the code before the bounded worker
    default_pool = None
kwargs = {"limits": LoadLimits(**limits)} if default_pool else {}

worker_peak = [0]
done = threading.Event()
def sample_once():
    for pid in default_pool().worker_pids():
        worker_peak[0] = max(worker_peak[0], hwm(pid))
def sample():
    while not done.wait(0.02):
        sample_once()
if default_pool:
    default_pool().prewarm()
    while not default_pool().worker_pids():
        time.sleep(0.05)
    threading.Thread(target=sample, daemon=True).start()
print(json.dumps({"ready": True}), flush=True)

started = time.perf_counter()
out = {}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        if kind == "sql":
            result = SafeDuckDB({"t": pd.DataFrame({"a": [1, 2]})}).run(target)
            out = {"ok": result.ok, "error_type": result.error_type, "message": result.error,
                   "rows": len(result.rows)}
        else:
            table = load_table(target, **kwargs)
            out = {"ok": True, "shape": list(table.df.shape)}
    except BaseException as exc:
        out = {"ok": False, "error_type": type(exc).__name__, "message": str(exc)[:400],
               "limit": getattr(exc, "limit", None)}
out["seconds"] = round(time.perf_counter() - started, 2)
import gc
gc.collect()  # what an in-process load left behind, before reporting
if default_pool:
    sample_once()  # a worker that is still alive: its high-water mark now
out["warnings"] = [str(w.message)[:200] for w in caught][:3]
done.set()
out["host_peak_rss_mb"] = hwm() // 2**20
out["worker_peak_rss_mb"] = worker_peak[0] // 2**20 if default_pool else None
print(json.dumps(out), flush=True)
"""


def build(folder: Path) -> dict[str, tuple[str, str]]:
    """The inputs: name -> (kind, path or SQL), at the sizes the issue reports."""
    f = folder
    files = {
        "parquet_dictionary_bomb": hostile.parquet_dictionary_bomb(f / "dict.parquet", rows=3000),
        "parquet_footer_1e12_rows": hostile.parquet_row_count_lie(f / "lie.parquet"),
        "duckdb_cross_join_view": hostile.duckdb_with_view(
            f / "cross.duckdb", hostile.DUCKDB_CROSS_JOIN
        ),
        "duckdb_repeat_view": hostile.duckdb_with_view(
            f / "repeat.duckdb", hostile.DUCKDB_REPEAT_BOMB
        ),
        "duckdb_endless_recursive_cte": hostile.duckdb_with_view(
            f / "cte.duckdb", hostile.DUCKDB_ENDLESS_CTE
        ),
        "sqlite_zeroblob_view": hostile.sqlite_with_view(
            f / "zeroblob.sqlite", hostile.SQLITE_ZEROBLOB_BOMB
        ),
        "sqlite_endless_recursive_cte": hostile.sqlite_with_view(
            f / "cte.sqlite", hostile.SQLITE_ENDLESS_CTE
        ),
        "xlsx_zip_bomb_1gb_sheet": hostile.xlsx_zip_bomb(f / "bomb.xlsx", sheet_mb=1024),
        "csv_200mb_header": hostile.csv_huge_header(f / "header.csv", header_mb=200),
        "json_100k_deep": hostile.deep_json(f / "deep.json"),
        "xlsx_malformed_workbook_xml": hostile.malformed_workbook(f / "workbook.xlsx"),
        "duckdb_view_of_duckdb_settings": hostile.duckdb_with_view(
            f / "settings.duckdb", "SELECT name, value FROM duckdb_settings()"
        ),
        "csv_nul_after_64kb": hostile.csv_nul_after_sample(f / "nul.csv"),
    }
    inputs = {name: ("file", str(path)) for name, path in files.items()}
    inputs["sql_repeat_2e9"] = ("sql", "SELECT length(repeat('x', 2000000000)) AS n")
    inputs["sql_duckdb_settings"] = ("sql", "SELECT name, value FROM duckdb_settings()")
    return inputs


def run_one(kind: str, target: str, args: argparse.Namespace, limits: dict[str, Any]) -> dict:
    """Run one input in a fresh process; a timeout is recorded as killed at the limit."""
    env = {"PYTHONPATH": str(args.code), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    cap = int(args.cap_gb * 2**30)
    cmd = [sys.executable, "-c", _RUNNER, kind, target, str(cap), json.dumps(limits)]
    with tempfile.TemporaryDirectory() as cwd:  # so "" on sys.path is no checkout
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        ready = proc.stdout.readline()  # imports done (and a warm worker, if any)
        if '"ready"' not in ready:
            proc.kill()
            return {"ok": False, "error_type": "runner failed to start", "message": ready}
        started = time.perf_counter()
        try:
            out, _ = proc.communicate(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return {
                "ok": False,
                "error_type": "killed at limit",
                "message": f"still running after the {args.timeout:g} s timeout",
                "seconds": round(time.perf_counter() - started, 2),
            }
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if not lines:
        return {
            "ok": False,
            "error_type": "killed at limit",
            "message": f"the process died (exit code {proc.returncode}) under the "
            f"{args.cap_gb:g} GB address-space cap, before reporting",
            "seconds": round(time.perf_counter() - started, 2),
        }
    return json.loads(lines[-1])


def code_version(code: Path) -> str:
    """The checkout's commit (``+dirty`` when it has changes): results never name a local path."""
    git = ["git", "-C", str(code)]
    try:
        commit = subprocess.run(
            [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            [*git, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return commit + ("+dirty" if dirty else "")


def main() -> None:
    """Build the inputs, run each, merge the results into the JSON file."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", required=True, help="Key of this run in the results file.")
    parser.add_argument("--code", type=Path, default=ROOT, help="Checkout whose code runs.")
    parser.add_argument("--cap-gb", type=float, default=4.0, help="Address-space cap per run.")
    parser.add_argument("--timeout", type=float, default=150.0, help="Seconds per input.")
    parser.add_argument("--memory-mb", type=int, default=2048, help="LoadLimits.memory_mb")
    parser.add_argument("--cpu-seconds", type=float, default=60.0, help="LoadLimits.cpu_seconds")
    parser.add_argument("--wall-seconds", type=float, default=120.0, help="LoadLimits.wall_...")
    parser.add_argument("--only", nargs="*", help="Run only these inputs.")
    parser.add_argument("--out", type=Path, default=RESULTS, help="Results file (merged).")
    args = parser.parse_args()
    limits = {
        "memory_mb": args.memory_mb,
        "cpu_seconds": args.cpu_seconds,
        "wall_seconds": args.wall_seconds,
    }
    results: dict[str, Any] = json.loads(args.out.read_text()) if args.out.exists() else {}
    with tempfile.TemporaryDirectory() as folder:
        inputs = build(Path(folder))
        rows: dict[str, Any] = {}
        for name, (kind, target) in inputs.items():
            if args.only and name not in args.only:
                continue
            rows[name] = run_one(kind, target, args, limits)
            if kind == "file":
                rows[name]["file_bytes"] = Path(target).stat().st_size
            print(name, json.dumps(rows[name]), flush=True)  # noqa: T201
    results[args.label] = {
        "code": code_version(args.code),
        "cap_gb": args.cap_gb,
        "timeout_s": args.timeout,
        "load_limits": limits,
        "sql_limits": "SafeDuckDB defaults: timeout 5 s, memory_limit 512MB",
        "inputs": {**results.get(args.label, {}).get("inputs", {}), **rows},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
