"""The TableRAG graph end to end on WikiTableQuestions, with ablations from the context alone.

Each variant is a set of graph settings (``Context`` fields); every variant
answers the same fixed-seed sample, question by question. Per-question records
go to JSONL as they finish (a rerun resumes); the summary JSON names the split,
the sample's seed and ids, and every setting.

No Wikipedia variant: WTQ tables come without page titles, and the offline
intros corpus (``../shared/data/wiki``) covers the OTT-QA pages, not WTQ's, so
the summary node finds nothing here and the variant would equal ``graph``.
Measure it where pages exist (of 50 test-split questions, the offline corpus
gives a summary for 50 OTT-QA, 42 TabFact and 20 FeTaQA ones):
``tablerag eval --dataset ottqa ... --set wikipedia=true`` with
``TABLERAG_WIKI_INTROS=../shared/data/wiki/intros.jsonl.gz``.

Splits are the evaluation harness's (``tablerag eval``): each question's side
is fixed by a hash of its table, ``--seed`` orders the side, and ``--split dev``
is for tuning. A ``--split test`` sample also leaves out every WTQ question id
found in an earlier ``bench/results`` file (``--no-exclude-seen`` keeps them,
giving ``tablerag eval``'s own sample). Report a test figure once, after
tuning. The sample is frozen in ``NAME.sample.json`` when a run starts, so a
resumed run answers the questions it started with; a sample frozen before the
bench used the harness's split (random training questions) is refused.

    python bench/graph_wtq.py --split dev --seed 0 --n 30 --variants graph
    python bench/graph_wtq.py --split dev --seed 0 --n 30 --variants graph,ground_literals
    python bench/graph_wtq.py --split test --seed 3 --n 100 \
        --variants graph,filter_semantic,clarify_terms --summary-name graph_wtq_test_v2
    python bench/graph_wtq.py ... --summary-only   # summary of what has finished (paired)

The summary never replaces an existing file: it goes to a timestamped name
beside it unless ``--force``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from _results import result_path
from _wtq_split import SPLIT_RULE, wtq_sample
from tablerag_agents.graphs import Context, TableQAResult, build_graph

from tablerag_agents.config import Settings
from tablerag_agents.evaluation.datasets import QAExample, load_wtq, read_wtq_table
from tablerag_agents.evaluation.metrics import exact_match, paired_comparison
from tablerag_agents.evaluation.splits import Split
from tablerag_agents.resources import Resources
from tablerag_agents.tables import Table

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"

VARIANTS: dict[str, dict[str, Any]] = {
    "graph": {},
    "solver_sql": {"solver": "sql", "retry_solvers": []},
    "no_expansion": {"expand_query": False},
    "filter_semantic": {"filter": "semantic"},
    "filter_llm": {"filter": "llm"},
    "filter_pieta": {"filter": "pieta"},
    "clarify_terms": {"clarify_terms": True},
    "table_string": {"table_format": "string"},
    "table_html": {"table_format": "html"},
    "ground_literals": {"ground_literals": True},
}


def parse_args() -> argparse.Namespace:
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--questions", type=Path, default=REPO / "../shared/data/wtq/training.tsv")
    ap.add_argument("--tables-root", type=Path, default=REPO / "../shared/data/wtq/")
    ap.add_argument("--split", choices=["dev", "test"], required=True)
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--exclude-seen",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="leave out WTQ ids of earlier bench/results files (default: on for test)",
    )
    ap.add_argument("--variants", default="graph", help=f"from {','.join(VARIANTS)}")
    ap.add_argument("--max-tokens", type=int, default=400)
    ap.add_argument("--name", default=None, help="results file stem")
    ap.add_argument("--summary-name", default=None, help="summary file stem (default: --name)")
    ap.add_argument(
        "--summary-only",
        action="store_true",
        help="run nothing; summarise the questions every variant has answered so far",
    )
    ap.add_argument(
        "--force", action="store_true", help="overwrite an existing summary of this name"
    )
    return ap.parse_args()


def seen_question_ids(exclude: Path | None = None) -> set[str]:
    """WTQ question ids in any earlier results file (``id`` in JSONL, ``question_ids`` in JSON)."""
    seen: set[str] = set()
    for path in RESULTS.glob("*.json*"):
        if exclude is not None and path.name.startswith(exclude.stem):
            continue
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".jsonl":
            for line in text.splitlines():
                if line.strip():
                    qid = json.loads(line).get("id")
                    if isinstance(qid, str) and qid.startswith("nt-"):
                        seen.add(qid)
        else:
            data = json.loads(text)
            ids = data.get("question_ids", []) if isinstance(data, dict) else []
            seen.update(i for i in ids if isinstance(i, str) and i.startswith("nt-"))
    return seen


def choose_sample(
    questions: Path,
    tables_root: Path,
    split: Split,
    n: int,
    seed: int,
    *,
    frozen: Path,
    exclude: set[str],
) -> tuple[list[QAExample], int]:
    """The run's sample on the harness's ``split``, and how many ids ``exclude`` left out.

    A new run draws it and freezes the ids in ``frozen``; a resumed run reads them back.

    Raises:
        SystemExit: ``frozen`` was drawn on the other side, or before this bench
            used the harness's split (its ``test`` meant random training questions).
    """
    if not frozen.exists():
        sample = wtq_sample(questions, tables_root, split, n, seed, exclude=exclude)
        record = {
            "question_ids": [ex.id for ex in sample],
            "excluded": len(exclude),
            "split": split,
            "split_rule": SPLIT_RULE,
        }
        frozen.parent.mkdir(parents=True, exist_ok=True)
        frozen.write_text(json.dumps(record), encoding="utf-8")
        return sample, len(exclude)
    data = json.loads(frozen.read_text(encoding="utf-8"))
    if data.get("split_rule") != SPLIT_RULE or data.get("split") != split:
        raise SystemExit(
            f"{frozen} holds a sample drawn by another rule ({data.get('split_rule', 'random')}, "
            f"split {data.get('split')}); pass another --name for a {split} sample"
        )
    by_id = {ex.id: ex for ex in load_wtq(questions, tables_root)}
    return [by_id[q] for q in data["question_ids"]], int(data.get("excluded", 0))


def bootstrap_interval(values: list[bool], rounds: int = 2000, seed: int = 0) -> list[float]:
    """95% bootstrap interval of the mean of ``values``."""
    import random

    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choice(values) for _ in range(n)) / n for _ in range(rounds))
    return [round(means[int(0.025 * rounds)], 3), round(means[int(0.975 * rounds) - 1], 3)]


def run_one(graph: Any, res: Resources, ex: QAExample, ctx: Context) -> dict[str, Any]:
    """Answer one question; the record with the answer, correctness, cost and trace."""
    table = Table(ex.table_path.stem, read_wtq_table(ex.table_path), caption="")
    res.add_table(table)
    started = time.perf_counter()
    error = None
    out: dict[str, Any] = {}
    try:
        out = graph.invoke({"question": ex.question, "tables": [table.id]}, context=ctx)
    except Exception as exc:  # a crash is a result too: counted, not hidden
        error = f"{type(exc).__name__}: {exc}"
    result = TableQAResult.from_output(out, seconds=time.perf_counter() - started)
    answer = result.answer
    return {
        "id": ex.id,
        "question": ex.question,
        "table": ex.table_path.name,
        "gold": ex.answers,
        "answer": answer.text,
        "items": answer.items,
        "correct": bool(answer.items) and exact_match(answer.items, ex.answers),
        "abstained": answer.abstained,
        "solver": answer.solver,
        "error": error or answer.error,
        "crashed": error is not None,
        "seconds": round(result.seconds, 2),
        "input_tokens": result.input_tokens,
        "output_tokens": result.output_tokens,
        "nodes": result.nodes,
        "trace": result.trace,
    }


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Accuracy with its interval, abstentions, crashes, tokens and seconds."""
    correct = [r["correct"] for r in records]
    seconds = [r["seconds"] for r in records]
    return {
        "n": len(records),
        "accuracy": round(sum(correct) / len(records), 3),
        "accuracy_95ci": bootstrap_interval(correct),
        "abstained": sum(r["abstained"] for r in records),
        "crashed": sum(r["crashed"] for r in records),
        "mean_input_tokens": round(statistics.mean(r["input_tokens"] for r in records)),
        "mean_output_tokens": round(statistics.mean(r["output_tokens"] for r in records)),
        "p50_seconds": round(statistics.median(seconds), 1),
        "p95_seconds": round(sorted(seconds)[max(0, int(0.95 * len(seconds)) - 1)], 1),
    }


def main() -> None:
    """Run every variant over the sample with resume, then write the summary JSON."""
    args = parse_args()
    logging.basicConfig(level=logging.WARNING)
    name = args.name or f"graph_wtq_{args.split}_seed{args.seed}"
    traces = RESULTS / f"{name}.jsonl"
    exclude_seen = args.split == "test" if args.exclude_seen is None else args.exclude_seen
    seen = seen_question_ids(exclude=traces) if exclude_seen else set()
    sample, excluded = choose_sample(
        args.questions,
        args.tables_root,
        args.split,
        args.n,
        args.seed,
        frozen=RESULTS / f"{name}.sample.json",
        exclude=seen,
    )
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise SystemExit(f"unknown variants {unknown}; choose from {list(VARIANTS)}")
    done: dict[tuple[str, str], dict[str, Any]] = {}
    if traces.exists():
        for line in traces.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                done[(rec["id"], rec["variant"])] = rec
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=REPO
    ).stdout.strip()
    if not args.summary_only:
        answer_sample(sample, variants, done, traces, commit, args.max_tokens)
    # Paired by construction: only questions that every variant has answered.
    ids = [ex.id for ex in sample if all((ex.id, v) in done for v in variants)]
    if not ids:
        raise SystemExit("no question has been answered by every variant yet")
    rows = {v: summarize([done[(q, v)] for q in ids]) for v in variants}
    base = variants[0]
    for variant, row in rows.items():
        if variant != base:  # the same questions: a paired difference says more
            cmp = paired_comparison(
                [done[(q, variant)]["correct"] for q in ids],
                [done[(q, base)]["correct"] for q in ids],
            )
            row[f"minus_{base}"] = round(cmp.difference, 3)
            row[f"minus_{base}_95ci"] = [round(x, 3) for x in cmp.difference_ci]
        print(f"{variant:<16} {json.dumps(row)}")
    commits = sorted({done[(q, v)].get("git_commit", "unrecorded") for q in ids for v in variants})
    summary = {
        "name": name,
        "split": args.split,
        "split_rule": SPLIT_RULE,
        "seed": args.seed,
        "n": len(ids),
        "complete": len(ids) == len(sample),
        "sample_size": len(sample),
        "excluded_seen_ids": excluded,
        "load_average_at_end": list(os.getloadavg()),
        "question_ids": ids,
        "git_commit": commit,
        "answered_at_commits": commits,
        "model": "embedded qwen2.5-coder-1.5b-instruct q4_k_m",
        "max_tokens": args.max_tokens,
        "variants": {v: VARIANTS[v] for v in variants},
        "summary": rows,
        "traces": traces.name,
    }
    out = result_path(RESULTS / f"{args.summary_name or name}.json", force=args.force)
    out.write_text(json.dumps(summary, indent=2), encoding="utf-8")
    print(f"saved {out} and {traces}")


def answer_sample(
    sample: list[QAExample],
    variants: list[str],
    done: dict[tuple[str, str], dict[str, Any]],
    traces: Path,
    commit: str,
    max_tokens: int,
) -> None:
    """Answer every (question, variant) not in ``done``, appending records to ``traces``."""
    settings = Settings(llm_cache=False, temperature=0.0, max_tokens=max_tokens)
    res = Resources(settings)
    graph = build_graph(res)
    RESULTS.mkdir(parents=True, exist_ok=True)
    with traces.open("a", encoding="utf-8") as fh:
        for i, ex in enumerate(sample, 1):
            for variant in variants:
                if (ex.id, variant) in done:
                    continue
                rec = run_one(graph, res, ex, Context(**VARIANTS[variant]))
                rec["variant"] = variant
                rec["git_commit"] = commit
                done[(ex.id, variant)] = rec
                fh.write(json.dumps(rec, default=str) + "\n")
                fh.flush()
                mark = "OK " if rec["correct"] else "   "
                print(
                    f"[{i}/{len(sample)}] {mark}{variant:<16}{rec['seconds']:6.1f}s {ex.id}: "
                    f"{rec['answer'][:40]!r} gold={ex.answers}",
                    flush=True,
                )
    res.close()


if __name__ == "__main__":
    main()
