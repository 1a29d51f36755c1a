"""Compare the table-QA solvers on WikiTableQuestions with the embedded local model.

Runs ReadTable (whole table in the prompt), PyReAct, SQL and process_df on the
same fixed-seed sample of WTQ questions, question by question (so every solver
sees the same machine load), and reports accuracy, exception rate, mean
iterations, tokens and seconds per question. Two combinations are scored from
the same runs (no extra model calls): ``fallback`` (``--chain``: solvers in the
graph's ``retry_solvers`` way, the first that produced a value answers) and
``vote`` (``--vote``: the answer most runs agree on, counting every sampled
program of the ``*_sc`` solvers).
Per-question records go to a JSONL file as they finish; a rerun resumes from it.

Questions come from the evaluation harness's split (``tablerag eval``): a
question's side is fixed by a hash of its table, ``--seed`` orders the side;
``--split dev`` (the default) is for tuning, ``--split test`` to report once.
The runs in ``bench/results`` named ``solvers_wtq*`` without a split in their
name predate this: they sampled training questions at random.

    python bench/solvers_wtq.py                          # 30 dev questions, seed 0
    python bench/solvers_wtq.py --solvers read_table,pyreact,sql,process_df,sql_sc,process_df_sc
    python bench/solvers_wtq.py --seed 1 --exclude-seed 0   # another dev sample, disjoint
    python bench/solvers_wtq.py --solvers pyreact,pyreact_nocache --limit 10 \
        --name solvers_wtq_prefix_cache_dev               # prefix cache on vs off

The summary never replaces an existing file: it goes to a timestamped name
beside it unless ``--force``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from _wtq_split import SPLIT_RULE, open_run, wtq_sample

from tablerag_agents.config import Settings
from tablerag_agents.evaluation.datasets import QAExample, read_wtq_table
from tablerag_agents.evaluation.metrics import RunRecord, exact_match, summarize
from tablerag_agents.evaluation.splits import Split
from tablerag_agents.models import get_chat_model
from tablerag_agents.sandbox import Sandbox
from tablerag_agents.solve import (
    ProcessDfSolver,
    PyReActSolver,
    ReadTableSolver,
    SolverContext,
    SolverResult,
    SQLSolver,
    VotingSolver,
)
from tablerag_agents.solve.combine import merge_results
from tablerag_agents.solve.preview import DEFAULT_FULL_TABLE_TOKENS

REPO = Path(__file__).resolve().parent.parent
ALL_SOLVERS = (
    "read_table",
    "pyreact",
    "sql",
    "sql_sc",
    "process_df",
    "process_df_sc",
    "pyreact_nocache",
)
NO_CACHE = {"cache_prompt": False}


def parse_args() -> argparse.Namespace:
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--questions", type=Path, default=REPO / "../shared/data/wtq/training.tsv")
    ap.add_argument("--tables-root", type=Path, default=REPO / "../shared/data/wtq/")
    ap.add_argument(
        "--split", choices=["dev", "test"], default="dev", help="the harness's split (by table)"
    )
    ap.add_argument("--n", type=int, default=30, help="questions in the sample")
    ap.add_argument("--seed", type=int, default=0, help="sample seed")
    ap.add_argument(
        "--exclude-seed",
        type=int,
        default=None,
        help="leave out the --n sample of this seed (same split)",
    )
    ap.add_argument("--limit", type=int, default=None, help="only the first K sampled questions")
    ap.add_argument(
        "--solvers",
        default="read_table,pyreact,sql,process_df",
        help=f"comma-separated, from {','.join(ALL_SOLVERS)}",
    )
    ap.add_argument("--max-iterations", type=int, default=5, help="PyReAct action limit")
    ap.add_argument(
        "--samples", type=int, default=5, help="programs voted in process_df_sc and sql_sc"
    )
    ap.add_argument(
        "--chain",
        default="sql,process_df,read_table",
        help="`fallback` row: the first of these solvers with a non-empty answer",
    )
    ap.add_argument(
        "--vote",
        default="sql_sc,process_df_sc,read_table",
        help="`vote` row: the answer with most runs behind it (ties: first listed)",
    )
    ap.add_argument(
        "--full-table-tokens",
        type=int,
        default=DEFAULT_FULL_TABLE_TOKENS,
        help="code solvers see every row when the table fits in this many tokens (0: first rows)",
    )
    ap.add_argument("--max-tokens", type=int, default=400, help="max new tokens per LLM call")
    ap.add_argument(
        "--ground-literals",
        action="store_true",
        help="SQL and process_df: rewrite a literal inside exactly one cell to that cell "
        "(off by default, as in the library; runs before it was a switch had it on)",
    )
    ap.add_argument(
        "--no-prefix-cache", action="store_true", help="disable the server's prompt cache"
    )
    ap.add_argument(
        "--workers",
        type=int,
        default=1,
        help="questions solved at once (the server has 4 slots; >1 inflates s/q)",
    )
    ap.add_argument(
        "--name", default=None, help="results file stem (default: solvers_wtq_SPLIT_seedS)"
    )
    ap.add_argument("--out-dir", type=Path, default=REPO / "bench" / "results")
    ap.add_argument("--fresh", action="store_true", help="ignore earlier records of this run")
    ap.add_argument("--force", action="store_true", help="overwrite an existing summary")
    return ap.parse_args()


def choose_sample(
    questions: Path,
    tables_root: Path,
    split: Split,
    n: int,
    seed: int,
    exclude_seed: int | None = None,
) -> list[QAExample]:
    """``n`` questions of the harness's ``split`` (seed order), without ``exclude_seed``'s."""
    exclude: set[str] = set()
    if exclude_seed is not None:
        exclude = {e.id for e in wtq_sample(questions, tables_root, split, n, exclude_seed)}
    return wtq_sample(questions, tables_root, split, n, seed, exclude=exclude)


def build_solvers(names: list[str], args: argparse.Namespace) -> dict[str, Any]:
    """Create the solvers over one embedded model and one sandbox."""
    settings = Settings(llm_cache=False, temperature=0.0, max_tokens=args.max_tokens)
    model: Any = get_chat_model(settings)
    if args.no_prefix_cache:
        model = model.bind(extra_body=NO_CACHE)
    sandbox = Sandbox()
    made = {name: make_solver(name, args, model, sandbox, settings) for name in names}
    return made


def make_solver(
    name: str, args: argparse.Namespace, model: Any, sandbox: Sandbox, settings: Settings
) -> Any:
    """One solver of the comparison by its name."""
    view = {"full_table_tokens": args.full_table_tokens}
    grounding = {"ground_literals": args.ground_literals}
    if name == "read_table":
        return ReadTableSolver(model, context_tokens=settings.n_ctx)
    if name in ("pyreact", "pyreact_nocache"):
        chat = model.bind(extra_body=NO_CACHE) if name == "pyreact_nocache" else model
        return PyReActSolver(chat, sandbox, max_iterations=args.max_iterations, **view)
    if name in ("sql", "sql_sc"):
        samples = args.samples if name == "sql_sc" else 1
        return SQLSolver(model, samples=samples, **view, **grounding)
    if name in ("process_df", "process_df_sc"):
        samples = args.samples if name == "process_df_sc" else 1
        return ProcessDfSolver(model, sandbox, samples=samples, **view, **grounding)
    raise SystemExit(f"unknown solver {name!r}; choose from {ALL_SOLVERS}")


def record_of(ex: QAExample, solver: str, res: SolverResult, root: Path) -> dict[str, Any]:
    """One JSONL record: the outcome and the full trace."""
    return {
        "id": ex.id,
        "solver": solver,
        "question": ex.question,
        "table": os.path.relpath(ex.table_path, root.resolve()),
        "gold": ex.answers,
        "answer": res.answer,
        "answer_items": res.answer_items,
        "correct": exact_match(res.answer_items, ex.answers),
        "error": res.error,
        "exception": bool(res.error) and res.code_errors > 0,
        "code_errors": res.code_errors,
        "iterations": res.iterations,
        "input_tokens": res.input_tokens,
        "output_tokens": res.output_tokens,
        "cached_tokens": res.cached_tokens,
        "seconds": round(res.seconds, 3),
        "votes": [v.model_dump() for v in res.votes],
        "confidence": res.confidence,
        "truncated": res.truncated,
        "provenance": res.provenance.model_dump(),
        "trace": [s.model_dump() for s in res.trace],
    }


def load_records(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Records already on disk, by (question id, solver)."""
    done: dict[tuple[str, str], dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                done[(rec["id"], rec["solver"])] = rec
    return done


class Replay:
    """A solver that returns a recorded result, so combinations reuse member runs."""

    def __init__(self, rec: dict[str, Any]) -> None:
        """Rebuild the member's result from its JSONL record."""
        self.name = rec["solver"]
        fields = {k: rec[k] for k in SolverResult.model_fields if k in rec and k != "trace"}
        self.result = SolverResult(**{**fields, "solver": self.name})

    def solve(self, ctx: Any, df: Any = None) -> SolverResult:
        """The recorded result."""
        return self.result


class RetryChain:
    """The graph's ``retry_solvers`` over recorded results: the first with a value answers."""

    def __init__(self, members: list[Replay], *, name: str) -> None:
        """Store the members in the order the graph would try them."""
        self.members = members
        self.name = name

    def solve(self, ctx: Any, df: Any = None) -> SolverResult:
        """The first member result with a value (else the last), with the costs of those run."""
        ran: list[SolverResult] = []
        for member in self.members:
            ran.append(member.result)
            if member.result.ok:
                break
        return merge_results(ran[-1], ran, self.name, 0.0)


def combined_record(
    combo: Any, members: list[dict[str, Any]], ex: QAExample, root: Path
) -> dict[str, Any]:
    """Run a retry chain or a VotingSolver over recorded member results: one record.

    The table is read again: the vote checks every answer against its cells.
    """
    table = read_wtq_table(ex.table_path)
    res = combo.solve(SolverContext.from_df(ex.question, table, table_id=ex.table_path.stem))
    ran = set(res.tried)
    res.seconds = sum(m["seconds"] for m in members if m["solver"] in ran)
    rec = record_of(ex, combo.name, res, root)
    rec["answered_by"] = res.solver.split(":", 1)[-1]
    return rec


def summary_rows(records: list[dict[str, Any]], order: list[str]) -> dict[str, dict[str, Any]]:
    """Per-solver summary statistics."""
    rows: dict[str, dict[str, Any]] = {}
    for name in order:
        recs = [r for r in records if r["solver"] == name]
        if not recs:
            continue
        stats = summarize(
            RunRecord(
                correct=r["correct"],
                error=r["exception"],
                iterations=r["iterations"],
                input_tokens=r["input_tokens"],
                output_tokens=r["output_tokens"],
                seconds=r["seconds"],
            )
            for r in recs
        ).as_dict()
        stats["no_answer_rate"] = sum(bool(r["error"]) for r in recs) / len(recs)
        stats["correct"] = sum(r["correct"] for r in recs)
        if any("cached_tokens" in r for r in recs):
            stats["mean_cached_tokens"] = sum(r.get("cached_tokens", 0) for r in recs) / len(recs)
        if any(r.get("truncated") for r in recs):
            stats["truncated"] = sum(bool(r.get("truncated")) for r in recs)
        rows[name] = stats
    return rows


def print_summary(rows: dict[str, dict[str, Any]], title: str) -> None:
    """Print the summary table."""
    print(f"\n{title}")
    head = (
        f"{'solver':<16}{'n':>4}{'acc':>8}{'exc':>7}{'noans':>7}{'iters':>7}"
        f"{'tok_in':>9}{'tok_out':>9}{'cached':>9}{'s/q':>8}"
    )
    print(head)
    print("-" * len(head))
    for name, s in rows.items():
        print(
            f"{name:<16}{s['n']:>4}{s['accuracy']:>8.3f}{s['exception_rate']:>7.2f}"
            f"{s['no_answer_rate']:>7.2f}{s['mean_iterations']:>7.2f}"
            f"{s['mean_input_tokens']:>9.0f}{s['mean_output_tokens']:>9.0f}"
            f"{s.get('mean_cached_tokens', 0):>9.0f}{s['seconds_per_question']:>8.1f}"
        )


def main() -> None:
    """Run the benchmark with resume, then write the summary JSON."""
    args = parse_args()
    logging.basicConfig(level=logging.WARNING)
    names = [s.strip() for s in args.solvers.split(",") if s.strip()]
    sample = choose_sample(
        args.questions, args.tables_root, args.split, args.n, args.seed, args.exclude_seed
    )
    args.name = args.name or f"solvers_wtq_{args.split}_seed{args.seed}"
    traces, out = open_run(
        args.out_dir, args.name, sample, args.split, fresh=args.fresh, force=args.force
    )
    sample = sample[: args.limit]
    done = load_records(traces)
    solvers = build_solvers(names, args)
    started = time.perf_counter()
    lock = threading.Lock()

    def run_question(i: int, ex: QAExample, fh: Any) -> None:
        df = read_wtq_table(ex.table_path)
        for name, solver in solvers.items():
            if (ex.id, name) in done:
                continue
            ctx = SolverContext.from_df(ex.question, df, table_id=ex.table_path.stem)
            rec = record_of(ex, name, solver.solve(ctx), args.tables_root)
            with lock:
                done[(ex.id, name)] = rec
                fh.write(json.dumps(rec, default=str) + "\n")
                fh.flush()
            mark = "OK " if rec["correct"] else "   "
            print(
                f"[{i}/{len(sample)}] {mark}{name:<15} {rec['seconds']:6.1f}s "
                f"{ex.id}: {rec['answer'][:40]!r} gold={ex.answers}",
                flush=True,
            )

    with traces.open("a", encoding="utf-8") as fh, ThreadPoolExecutor(args.workers) as pool:
        futures = [pool.submit(run_question, i, ex, fh) for i, ex in enumerate(sample, 1)]
        for future in futures:
            future.result()
    ids = {ex.id for ex in sample}
    records = [r for (qid, s), r in done.items() if qid in ids and s in names]
    order = list(names)
    combos = {"fallback": (RetryChain, args.chain), "vote": (VotingSolver, args.vote)}
    for combo_name, (kind, spec) in combos.items():
        members = [m for m in spec.split(",") if m]
        if len(members) < 2 or not set(members) <= set(names):
            continue
        for ex in sample:
            recs = [done[(ex.id, m)] for m in members]
            combo = kind([Replay(r) for r in recs], name=combo_name)
            records.append(combined_record(combo, recs, ex, args.tables_root))
        order.append(combo_name)
    rows = summary_rows(records, order)
    title = f"WTQ {args.name}: {len(sample)} {args.split} questions (seed {args.seed})"
    print_summary(rows, title)
    code_rows = {k: v for k, v in rows.items() if k != "read_table"}
    ratio = None
    if "read_table" in rows and code_rows and rows["read_table"]["accuracy"] > 0:
        best = max(code_rows.values(), key=lambda s: s["accuracy"])
        ratio = best["accuracy"] / rows["read_table"]["accuracy"]
        print(f"best solver / ReadTable accuracy: {ratio:.2f}x (target >= 2x)")
    summary = {
        "name": args.name,
        "questions_file": str(args.questions),
        "n": len(sample),
        "split": args.split,
        "split_rule": SPLIT_RULE,
        "seed": args.seed,
        "exclude_seed": args.exclude_seed,
        "question_ids": [ex.id for ex in sample],
        "model": "embedded qwen2.5-coder-1.5b-instruct q4_k_m",
        "max_iterations": args.max_iterations,
        "max_tokens": args.max_tokens,
        "ground_literals": args.ground_literals,
        "prefix_cache": not args.no_prefix_cache,
        "workers": args.workers,
        "wall_seconds_this_invocation": round(time.perf_counter() - started, 1),
        "summary": rows,
        "best_over_read_table": ratio,
        "traces": traces.name,
    }
    out.write_text(json.dumps(summary, indent=2), encoding="utf-8")
    print(f"saved {out} and {traces}")


if __name__ == "__main__":
    main()
