"""Table filters on WikiTableQuestions: is the answer cell kept, and how much of the table.

For WTQ training questions whose (single) answer equals a cell of the table,
each filter (semantic dense, semantic MaxSim, the LLM filter with
self-consistency voting on sub-tables or on columns, PieTa) selects a
sub-table; we report answer-cell recall
(a kept cell equals the answer), the fraction of the table's cells kept,
fallbacks, tokens and seconds. PieTa's paper reports recall 97.8 at precision
51.2 on WikiSQL (gold sub-table cells; ours counts the answer cell only).

Questions come from the evaluation harness's split (``tablerag eval``): a
question's side is fixed by a hash of its table and ``--seed`` orders the side;
``--split dev`` (the default) is for tuning, ``--split test`` to report once.
The sample is the first ``--n`` answer-in-a-cell questions of that order,
leaving out the questions of ``bench/solvers_wtq.py``'s samples on the same
split (seeds 0 and 2, 30 questions each, the second drawn without the first).
The runs in ``bench/results`` named ``filters_wtq*`` without a split in their
name predate this: they sampled training questions at random. Filters run one
after the other over the whole sample (cheap ones first), records go to a JSONL
file as they finish, and a rerun resumes from it.

    python bench/filters.py --n 50                       # every filter, dev seed 7
    python bench/filters.py --n 50 --filters semantic_dense,semantic_maxsim
    python bench/filters.py --n 50 --summary-only        # summary of what has finished

``llm_filter_columns`` (the column vote) also writes ``llm_filter_same_programs``:
the sub-table vote over the same sampled programs, so the two rules are compared
without sampling twice. After tuning on dev, report on a test sample:

    python bench/filters.py --split test --n 50 --seed 11 \
        --filters semantic_dense,semantic_maxsim,llm_filter_columns

The summary never replaces an existing file: it goes to a timestamped name
beside it unless ``--force``.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
from _wtq_split import SPLIT_RULE, open_run, wtq_sample, wtq_side

from tablerag_agents.config import Settings
from tablerag_agents.evaluation.datasets import QAExample, read_wtq_table
from tablerag_agents.evaluation.metrics import bootstrap_ci
from tablerag_agents.evaluation.splits import Split
from tablerag_agents.filtering import SubTable, llm_filter, pieta_filter, semantic_filter
from tablerag_agents.filtering.base import column_names
from tablerag_agents.filtering.llm_filter import decide
from tablerag_agents.solve.normalize import NormalizedValue, normalize_value

REPO = Path(__file__).resolve().parent.parent
ALL_FILTERS = ("semantic_dense", "semantic_maxsim", "llm_filter", "llm_filter_columns", "pieta")
SAME_PROGRAMS = "llm_filter_same_programs"
"""Derived from each llm_filter_columns run: the sub-table vote over the same programs."""
PIETA_PAPER = {"dataset": "WikiSQL", "precision": 51.2, "recall": 97.8}


def parse_args() -> argparse.Namespace:
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--questions", type=Path, default=REPO / "../shared/data/wtq/training.tsv")
    ap.add_argument("--tables-root", type=Path, default=REPO / "../shared/data/wtq/")
    ap.add_argument(
        "--split", choices=["dev", "test"], default="dev", help="the harness's split (by table)"
    )
    ap.add_argument("--n", type=int, default=50, help="questions in the sample")
    ap.add_argument("--seed", type=int, default=7, help="sample seed")
    ap.add_argument(
        "--exclude-seeds",
        default="0,2",
        help="leave out the solvers_wtq samples (same split) of these seeds (drawn in this "
        "order, each without the earlier ones, as solvers_wtq.py --exclude-seed does)",
    )
    ap.add_argument("--exclude-n", type=int, default=30, help="size of each excluded sample")
    ap.add_argument(
        "--exclude-filter-seeds",
        default="",
        help="also leave out this bench's own earlier samples (of --n questions) of these "
        "seeds, e.g. 7: a fresh sample to report on after tuning on seed 7",
    )
    ap.add_argument("--limit", type=int, default=None, help="only the first K sampled questions")
    ap.add_argument("--filters", default=",".join(ALL_FILTERS), help="comma-separated")
    ap.add_argument("--top-rows", type=int, default=10, help="semantic filter rows")
    ap.add_argument("--top-columns", type=int, default=8, help="semantic filter columns")
    ap.add_argument("--samples", type=int, default=5, help="LLM filter programs voted")
    ap.add_argument("--window", type=int, default=3, help="PieTa window size")
    ap.add_argument("--stride", type=int, default=1, help="PieTa window stride")
    ap.add_argument(
        "--max-windows",
        type=int,
        default=16,
        help="most PieTa windows per round (the stride, then the windows grow); 0: no bound",
    )
    ap.add_argument("--max-rounds", type=int, default=3, help="PieTa rounds")
    ap.add_argument("--max-cells", type=int, default=2000, help="PieTa cell cap")
    ap.add_argument("--max-tokens", type=int, default=400, help="max new tokens per LLM call")
    ap.add_argument(
        "--name", default=None, help="results file stem (default: filters_wtq_SPLIT_seedS)"
    )
    ap.add_argument("--out-dir", type=Path, default=REPO / "bench" / "results")
    ap.add_argument("--fresh", action="store_true", help="ignore earlier records of this run")
    ap.add_argument("--force", action="store_true", help="overwrite an existing summary")
    ap.add_argument(
        "--summary-only", action="store_true", help="summarise the records on disk, run nothing"
    )
    return ap.parse_args()


def answer_cells(df: pd.DataFrame, gold: NormalizedValue) -> int:
    """How many cells of ``df`` equal the gold answer (after normalisation)."""
    return sum(normalize_value(v).matches(gold) for v in df.to_numpy().ravel())


def cell_answer_sample(
    questions: Path, tables_root: Path, split: Split, n: int, seed: int, excluded: set[str]
) -> list[QAExample]:
    """The first ``n`` questions of the harness's ``split`` (in ``seed``'s order) whose single
    gold answer equals a cell of their table."""
    picked: list[QAExample] = []
    for ex in wtq_side(questions, tables_root, split, seed, exclude=excluded):
        if len(picked) == n:
            break
        if len(ex.answers) != 1:
            continue
        df = read_wtq_table(ex.table_path)
        if df.size and answer_cells(df, normalize_value(ex.answers[0])):
            picked.append(ex)
    return picked


def excluded_ids(
    questions: Path, tables_root: Path, split: Split, seeds: list[int], n: int
) -> set[str]:
    """Ids of the solver benchmark's samples on ``split``, each drawn without the earlier."""
    out: set[str] = set()
    for seed in seeds:
        out |= {e.id for e in wtq_sample(questions, tables_root, split, n, seed, exclude=out)}
    return out


def choose_sample(args: argparse.Namespace) -> tuple[list[QAExample], set[str], list[int]]:
    """The run's sample, the ids left out, and the filter seeds whose samples were left out."""
    where = (args.questions, args.tables_root, args.split)
    seeds = [int(s) for s in args.exclude_seeds.split(",") if s.strip()]
    excluded = excluded_ids(*where, seeds, args.exclude_n)
    filter_seeds = [int(s) for s in args.exclude_filter_seeds.split(",") if s.strip()]
    for seed in filter_seeds:
        excluded |= {e.id for e in cell_answer_sample(*where, args.n, seed, excluded)}
    sample = cell_answer_sample(*where, args.n, args.seed, excluded)
    return sample, excluded, filter_seeds


def build_filters(names: list[str], args: argparse.Namespace) -> dict[str, Callable[..., SubTable]]:
    """One callable ``(question, df) -> SubTable`` per filter, over the embedded models."""
    from tablerag_agents.models import get_chat_model, get_embeddings

    made: dict[str, Callable[..., SubTable]] = {}
    emb = get_embeddings() if any(n.startswith("semantic") for n in names) else None
    sem = {"top_rows": args.top_rows, "top_columns": args.top_columns}
    if "semantic_dense" in names:
        made["semantic_dense"] = lambda q, df: semantic_filter(q, df, emb, scorer="dense", **sem)
    if "semantic_maxsim" in names:
        made["semantic_maxsim"] = lambda q, df: semantic_filter(q, df, emb, scorer="maxsim", **sem)
    if {"llm_filter", "llm_filter_columns", "pieta"} & set(names):
        settings = Settings(llm_cache=False, temperature=0.0, max_tokens=args.max_tokens)
        model = get_chat_model(settings)
        if "llm_filter" in names or "llm_filter_columns" in names:
            from tablerag_agents.sandbox import Sandbox

            sandbox = Sandbox()
        if "llm_filter" in names:
            made["llm_filter"] = lambda q, df: llm_filter(
                q, df, model, sandbox, samples=args.samples
            )
        if "llm_filter_columns" in names:
            made["llm_filter_columns"] = lambda q, df: llm_filter(
                q, df, model, sandbox, samples=args.samples, vote="columns"
            )
        if "pieta" in names:
            made["pieta"] = lambda q, df: pieta_filter(
                q,
                df,
                model,
                window=args.window,
                stride=args.stride,
                max_rounds=args.max_rounds,
                max_cells=args.max_cells,
                max_windows=args.max_windows or None,
            )
    unknown = set(names) - set(ALL_FILTERS)
    if unknown:
        raise SystemExit(f"unknown filters {sorted(unknown)}; choose from {ALL_FILTERS}")
    return made


def record_of(ex: QAExample, name: str, df: pd.DataFrame, sub: SubTable) -> dict[str, Any]:
    """One JSONL record: what the filter kept and whether the answer cell is in it."""
    gold = normalize_value(ex.answers[0])
    kept = answer_cells(sub.apply(df), gold)
    return {
        "id": ex.id,
        "filter": name,
        "question": ex.question,
        "gold": ex.answers,
        "table": str(ex.table_path.relative_to(ex.table_path.parents[2])),
        "shape": list(df.shape),
        "answer_cells": answer_cells(df, gold),
        "answer_cells_kept": kept,
        "recall": kept > 0,
        "cells_kept": sub.n_cells,
        "cell_fraction": sub.n_cells / df.size,
        **sub.model_dump(exclude={"detail"}),
        "detail": sub.detail,
    }


def same_programs(df: pd.DataFrame, columns_vote: SubTable, samples: int) -> SubTable:
    """The sub-table vote over the programs of a column-vote run (no new model call)."""
    detail = columns_vote.detail or {}
    keys = [
        None if st is None else (frozenset(st["rows"]), tuple(st["columns"]))
        for st in detail.get("subtables", [])
    ]
    got = decide(keys, samples=samples, vote="subtable", columns=column_names(df), n_rows=len(df))
    cost = columns_vote.model_dump(include={"input_tokens", "output_tokens", "seconds"})
    fields = {**cost, "detail": {**detail, "vote": "subtable", "votes": got.votes}}
    if got.rows is None:
        return SubTable.whole(df, "llm_filter", got.reason, **fields)
    return SubTable.select(df, got.rows, got.columns, "llm_filter", **fields)


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Recall, cells kept, fallbacks, tokens and time over one filter's records."""
    n = len(records)
    secs = [r["seconds"] for r in records]
    return {
        "n": n,
        "answer_cell_recall": sum(r["recall"] for r in records) / n,
        "answer_cell_recall_ci": list(bootstrap_ci([r["recall"] for r in records])),
        "mean_cell_fraction": statistics.fmean(r["cell_fraction"] for r in records),
        "mean_cell_fraction_ci": list(bootstrap_ci([r["cell_fraction"] for r in records])),
        "median_cell_fraction": statistics.median(r["cell_fraction"] for r in records),
        "fallback_rate": sum(r["fallback"] for r in records) / n,
        "recall_without_fallbacks": _safe_ratio(
            sum(r["recall"] for r in records if not r["fallback"]),
            sum(not r["fallback"] for r in records),
        ),
        "mean_input_tokens": statistics.fmean(r["input_tokens"] for r in records),
        "mean_output_tokens": statistics.fmean(r["output_tokens"] for r in records),
        "mean_seconds": statistics.fmean(secs),
        "p50_seconds": statistics.median(secs),
    }


def _safe_ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def print_summary(rows: dict[str, dict[str, Any]], title: str) -> None:
    """Print the summary table."""
    print(f"\n{title}")
    head = (
        f"{'filter':<26}{'n':>4}{'recall':>8}{'cells':>8}{'fallbk':>8}"
        f"{'tok_in':>9}{'tok_out':>9}{'s/q':>8}{'p50 s':>8}"
    )
    print(head)
    print("-" * len(head))
    for name, s in rows.items():
        print(
            f"{name:<26}{s['n']:>4}{s['answer_cell_recall']:>8.3f}{s['mean_cell_fraction']:>8.3f}"
            f"{s['fallback_rate']:>8.2f}{s['mean_input_tokens']:>9.0f}"
            f"{s['mean_output_tokens']:>9.0f}{s['mean_seconds']:>8.1f}{s['p50_seconds']:>8.1f}"
        )
    for name, s in rows.items():
        (rlo, rhi), (clo, chi) = s["answer_cell_recall_ci"], s["mean_cell_fraction_ci"]
        print(f"{name:<26}95% CI: recall [{rlo:.2f}, {rhi:.2f}], cells [{clo:.2f}, {chi:.2f}]")
    p = PIETA_PAPER
    print(f"PieTa paper ({p['dataset']}): recall {p['recall']} at precision {p['precision']}")


def main() -> None:
    """Run the filters with resume, then write the summary JSON."""
    args = parse_args()
    logging.basicConfig(level=logging.WARNING)
    names = [f.strip() for f in args.filters.split(",") if f.strip()]
    sample, excluded, filter_seeds = choose_sample(args)
    assert not excluded & {e.id for e in sample}
    args.name = args.name or f"filters_wtq_{args.split}_seed{args.seed}"
    traces, out = open_run(
        args.out_dir, args.name, sample, args.split, fresh=args.fresh, force=args.force
    )
    sample = sample[: args.limit]
    done: dict[tuple[str, str], dict[str, Any]] = {}
    if traces.exists():
        for line in traces.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                done[(rec["id"], rec["filter"])] = rec
    filters = {} if args.summary_only else build_filters(names, args)
    started = time.perf_counter()
    with traces.open("a", encoding="utf-8") as fh:
        for name, run in filters.items():  # filter by filter: cheap ones finish first
            for i, ex in enumerate(sample, 1):
                if (ex.id, name) in done:
                    continue
                df = read_wtq_table(ex.table_path)
                sub = run(ex.question, df)
                rec = record_of(ex, name, df, sub)
                done[(ex.id, name)] = rec
                fh.write(json.dumps(rec, default=str) + "\n")
                if name == "llm_filter_columns":
                    twin = record_of(ex, SAME_PROGRAMS, df, same_programs(df, sub, args.samples))
                    done[(ex.id, SAME_PROGRAMS)] = twin
                    fh.write(json.dumps(twin, default=str) + "\n")
                fh.flush()
                mark = "KEPT" if rec["recall"] else "lost"
                note = f" fallback: {rec['reason']}" if rec["fallback"] else ""
                print(
                    f"[{i}/{len(sample)}] {name:<16} {mark} {rec['cell_fraction']:5.2f} of "
                    f"{df.size:>4} cells {rec['seconds']:6.1f}s {ex.id}{note}",
                    flush=True,
                )
    ids = {ex.id for ex in sample}
    rows = {}
    if "llm_filter_columns" in names:
        names.append(SAME_PROGRAMS)
    for name in names:
        recs = [r for (qid, f), r in done.items() if qid in ids and f == name]
        if recs:
            rows[name] = summarize(recs)
    title = (
        f"WTQ {args.name}: {len(sample)} answer-in-a-cell {args.split} questions (seed {args.seed})"
    )
    print_summary(rows, title)
    # Slow filters may not have finished every question: compare all on the same ones.
    common = [ex.id for ex in sample if all((ex.id, name) in done for name in rows)]
    common_rows = {
        name: summarize([done[(qid, name)] for qid in common]) for name in rows if common
    }
    if common and len(common) < len(sample):
        print_summary(common_rows, f"the {len(common)} questions every filter has finished")
    meets = {
        k: s["n"] == len(sample)
        and s["answer_cell_recall"] >= 0.95
        and s["mean_cell_fraction"] <= 0.5
        for k, s in rows.items()
    }
    print(f"target recall >= 0.95 at <= 50% of cells: {meets}")
    summary = {
        "name": args.name,
        "questions_file": str(args.questions),
        "n": len(sample),
        "split": args.split,
        "split_rule": SPLIT_RULE,
        "seed": args.seed,
        "excluded_seeds": [int(s) for s in args.exclude_seeds.split(",") if s.strip()],
        "excluded_n": args.exclude_n,
        "excluded_filter_seeds": filter_seeds,
        "question_ids": [ex.id for ex in sample],
        "model": "embedded qwen2.5-coder-1.5b-instruct q4_k_m; embeddings all-MiniLM-L6-v2",
        "params": {
            k: getattr(args, k)
            for k in (
                "top_rows",
                "top_columns",
                "samples",
                "window",
                "stride",
                "max_rounds",
                "max_cells",
                "max_windows",
                "max_tokens",
            )
        },
        "pieta_paper": PIETA_PAPER,
        "target_met": meets,
        "wall_seconds_this_invocation": round(time.perf_counter() - started, 1),
        "summary": rows,
        "common_question_ids": common,
        "summary_common": common_rows,
        "traces": traces.name,
    }
    out.write_text(json.dumps(summary, indent=2), encoding="utf-8")
    print(f"saved {out} and {traces}")


if __name__ == "__main__":
    main()
