"""`tablerag index` throughput with 1 and more worker processes, and a kill-and-resume check.

Indexes the first --n-tables tables of the OTT-QA corpus (with the linked-page
intros, as the benchmarked index) once per --workers value, each a fresh
`tablerag index` process (model load and pool start included). Then the
resume check: a run is killed (SIGKILL, with its pool workers) once half of its
batches are committed, rerun with the same arguments, and compared with the
uninterrupted run: table ids, and the top-5 of every OTT-QA dev question whose
table is in the subset.

    nice -n 19 python bench/index_workers.py --n-tables 400 --workers 1,2
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
DEFAULT_OUT = REPO / "bench" / "results" / "index_workers.json"

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import add_output_args, result_path, save_json  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--n-tables", type=int, default=400)
    ap.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    ap.add_argument("--batch-size", type=int, default=64, help="tables per committed batch")
    ap.add_argument("--tables", type=Path, default=DATA / "ottqa" / "tables.json")
    ap.add_argument("--questions", type=Path, default=DATA / "ottqa" / "dev_questions.json")
    ap.add_argument(
        "--wiki",
        default=str(DATA / "wiki" / "intros.jsonl.gz"),
        help="linked-page intros for the 'passages' field ('' to skip)",
    )
    ap.add_argument("--no-resume-check", action="store_true")
    add_output_args(ap, DEFAULT_OUT)
    return ap.parse_args(argv)


def _command(args: argparse.Namespace, corpus: Path, out: Path, workers: int) -> list[str]:
    cmd = [sys.executable, "-m", "tablerag_agents.cli", "index", str(corpus), "--ottqa"]
    cmd += ["--out", str(out), "--workers", str(workers), "--batch-size", str(args.batch_size)]
    if args.wiki:
        cmd += ["--passages", args.wiki]
    return [*cmd, "--no-progress"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_run(cmd: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Run one indexing command; wall and CPU seconds (its pool workers included)."""
    cpu, wall = _children_cpu(), time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - wall, _children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "output": done.stdout.strip()}


def snapshot(index_dir: Path, questions: list[str]) -> dict[str, Any]:
    """Table ids and the top-5 tables (with scores) of each question."""
    from tablerag_agents.config import Settings
    from tablerag_agents.retrieval.corpus_folder import open_index

    with open_index(index_dir, Settings()) as index:
        hits = index.search_many(questions, k=5)
        return {
            "ids": index.table_ids(),
            "top5": [[(h.table_id, round(h.score, 5)) for h in hs] for hs in hits],
        }


def resume_check(
    args: argparse.Namespace, corpus: Path, folder: Path, env: dict[str, str], n_batches: int
) -> dict[str, Any]:
    """Kill a run half-way (SIGKILL to it and its workers), rerun it, compare."""
    out = folder / "killed"
    cmd = _command(args, corpus, out, max(int(w) for w in args.workers.split(",")))
    stop_after = max(1, n_batches // 2)
    started = time.perf_counter()
    child = subprocess.Popen(cmd, env=env, start_new_session=True, stdout=subprocess.DEVNULL)
    marker = out / ".resume" / f"batch-{stop_after - 1:06d}"
    while not marker.is_dir():
        if child.poll() is not None:
            raise SystemExit("the run ended before it could be killed: use more tables")
        time.sleep(0.05)
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    killed_after = time.perf_counter() - started
    committed = len([p for p in (out / ".resume").glob("batch-*") if p.suffix != ".tmp"])
    saved = (out / "manifest.json").exists()
    rerun = timed_run(cmd, env)
    return {
        "killed_after_s": round(killed_after, 1),
        "batches_committed_when_killed": committed,
        "index_saved_before_kill": saved,
        "rerun": rerun,
    }


def main() -> None:
    """Index the subset with each worker count, then kill and resume one run."""
    args = parse_args()
    out_file = result_path(DEFAULT_OUT, args.out, force=args.force)
    raw = json.loads(args.tables.read_text(encoding="utf-8"))
    subset = dict(list(raw.items())[: args.n_tables])
    questions = [
        q["question"]
        for q in json.loads(args.questions.read_text(encoding="utf-8"))
        if q["table_id"] in subset
    ]
    n_batches = -(-len(subset) // args.batch_size)
    report: dict[str, Any] = {
        "n_tables": len(subset),
        "batch_size": args.batch_size,
        "passages": bool(args.wiki),
        "cores": len(os.sched_getaffinity(0)),
        "load_average_1min_before": round(os.getloadavg()[0], 2),
        "runs": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        corpus = folder / "tables.json"
        corpus.write_text(json.dumps(subset), encoding="utf-8")
        env = {**os.environ, "TABLERAG_CACHE_DIR": str(folder / "cache")}
        snaps = {}
        for workers in (int(w) for w in args.workers.split(",")):
            run = timed_run(_command(args, corpus, folder / f"w{workers}", workers), env)
            run["tables_per_s"] = round(len(subset) / run["wall_s"], 1)
            report["runs"][str(workers)] = run
            snaps[workers] = snapshot(folder / f"w{workers}", questions)
            print(f"workers={workers}: {run}", flush=True)
        first, *rest = snaps.values()
        report["same_index_for_every_worker_count"] = all(s == first for s in rest)
        if not args.no_resume_check:
            check = resume_check(args, corpus, folder, env, n_batches)
            killed = snapshot(folder / "killed", questions)
            reference = snaps[max(snaps)]
            check["same_ids"] = killed["ids"] == reference["ids"]
            check["same_top5"] = killed["top5"] == reference["top5"]
            check["questions_compared"] = len(questions)
            report["resume_check"] = check
            print(f"resume: {check}", flush=True)
    report["load_average_1min_after"] = round(os.getloadavg()[0], 2)
    save_json(out_file, report)
    print(f"saved {out_file}")


if __name__ == "__main__":
    main()
