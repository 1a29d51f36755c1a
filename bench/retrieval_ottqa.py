"""OTT-QA table retrieval: HITS@1/5/10 of every CorpusIndex method, timings, LLM re-rank.

Questions are split into two fixed halves (first / second half of the file):
weights are tuned on half A only (``--tune``) and every number is reported on
A, B and all questions.

    python bench/retrieval_ottqa.py                       # build or load the index, evaluate
    python bench/retrieval_ottqa.py --rows --index-dir DIR  # + the row-document channel
    python bench/retrieval_ottqa.py --tune                # also re-tune hybrid weights on half A
    python bench/retrieval_ottqa.py --rerank-sample 100   # + LLM re-rank (tuned on A, scored on B)
    python bench/retrieval_ottqa.py --methods hybrid --candidates 50 30 20  # candidate pool sweep
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from tablerag_agents.errors import IndexNotFoundError, StaleIndexError
from tablerag_agents.models.embeddings import embeddings_name, get_embeddings
from tablerag_agents.retrieval.corpus import CorpusIndex
from tablerag_agents.retrieval.corpus_config import CorpusConfig, HybridWeights
from tablerag_agents.retrieval.corpus_fields import LinkedPassages
from tablerag_agents.retrieval.rerank_llm import (
    DEFAULT_RERANK_WEIGHT,
    ask_llm_ranking,
    fuse_llm_ranking,
)
from tablerag_agents.tables.ottqa import load_ottqa_corpus

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import add_output_args, result_path, save_json  # noqa: E402
from _retrieval_tuning import channel_score_cache, tune_weights  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
KS = (1, 5, 10)
DEFAULT_OUT = REPO / "bench" / "results" / "retrieval_ottqa.json"
METHODS = ("bm25", "bm25_fields", "dense", "rows", "colbert", "rrf", "hybrid")


def parse_args() -> argparse.Namespace:
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--questions", type=Path, default=DATA / "ottqa" / "dev_questions.json")
    ap.add_argument("--tables", type=Path, default=DATA / "ottqa" / "tables.json")
    ap.add_argument(
        "--wiki",
        type=Path,
        default=DATA / "wiki" / "intros.jsonl.gz",
        help="linked-page intros for the 'passages' field ('' to skip)",
    )
    ap.add_argument(
        "--index-dir",
        type=Path,
        default=Path.home() / ".cache" / "tablerag-agents" / "bench" / "ottqa_index",
    )
    ap.add_argument("--rebuild", action="store_true", help="rebuild the index even if it exists")
    ap.add_argument(
        "--rows",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="also index dense row documents (~140k rows: slow to build)",
    )
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--tune", action="store_true", help="tune hybrid weights on half A")
    ap.add_argument(
        "--rerank-sample",
        type=int,
        default=0,
        help="questions per half to re-rank with the chat model (0 = skip); the fusion"
        " weight is tuned on the half-A sample and reported on the half-B sample",
    )
    ap.add_argument("--rerank-top", type=int, default=5)
    ap.add_argument(
        "--candidates",
        type=int,
        nargs="+",
        default=[],
        help="also run hybrid with these per-channel candidate counts (HITS per half, latency)",
    )
    ap.add_argument("--latency-sample", type=int, default=100, help="questions timed one by one")
    add_output_args(ap, DEFAULT_OUT)
    return ap.parse_args()


def ranks_of(hit_lists: list[list[str]], gold: list[str]) -> list[int]:
    """1-based rank of the gold table in each list (0 when absent)."""
    return [ids.index(g) + 1 if g in ids else 0 for ids, g in zip(hit_lists, gold, strict=True)]


def hits_at(ranks: list[int]) -> dict[str, float]:
    """HITS@k for k in KS."""
    arr = np.asarray(ranks)
    return {f"hits@{k}": round(float(((arr > 0) & (arr <= k)).mean()), 4) for k in KS}


def split_report(ranks: list[int], half: int) -> dict[str, dict[str, float]]:
    """HITS@k on half A, half B and all questions."""
    return {"A": hits_at(ranks[:half]), "B": hits_at(ranks[half:]), "all": hits_at(ranks)}


def get_index(
    args: argparse.Namespace, config: CorpusConfig, embeddings: Any
) -> tuple[CorpusIndex, dict]:
    """Load the cached index, or build and save it (timed)."""
    if not args.rebuild:
        try:
            started = time.perf_counter()
            index = CorpusIndex.load(args.index_dir, embeddings, config=config)
            return index, {"loaded": True, "load_s": round(time.perf_counter() - started, 2)}
        except (IndexNotFoundError, StaleIndexError) as exc:
            print(f"building a new index ({exc})")
    timings: dict[str, Any] = {"loaded": False}
    started = time.perf_counter()
    tables = load_ottqa_corpus(args.tables)
    passages = LinkedPassages.from_jsonl(args.wiki) if str(args.wiki) else None
    timings["read_corpus_s"] = round(time.perf_counter() - started, 2)
    started = time.perf_counter()
    index = CorpusIndex.build(tables, embeddings, config=config, passages=passages)
    timings["build_s"] = round(time.perf_counter() - started, 2)
    started = time.perf_counter()
    index.save(args.index_dir)
    timings["save_s"] = round(time.perf_counter() - started, 2)
    started = time.perf_counter()
    CorpusIndex.load(args.index_dir, embeddings, config=config)
    timings["load_s"] = round(time.perf_counter() - started, 2)
    return index, timings


def evaluate(
    index: CorpusIndex, method: str, questions: list[dict], weights: HybridWeights | None
) -> dict:
    """Search every question (query vectors batch-encoded beforehand); return ranks and HITS@k."""
    retriever = index.retriever(method, weights=weights)  # type: ignore[arg-type]
    lists = [[h.id for h in retriever.search(q["question"], 10)] for q in questions]
    ranks = ranks_of(lists, [q["table_id"] for q in questions])
    return {"ranks": ranks, "hits": split_report(ranks, len(questions) // 2)}


def latency(
    index: CorpusIndex, method: str, questions: list[dict], weights: HybridWeights | None
) -> dict:
    """p50/p95 of one cold search (query encoding included) over a fixed sample."""
    retriever = index.retriever(method, weights=weights)  # type: ignore[arg-type]
    index.prime_queries([])  # forget batch-encoded queries
    times = []
    for q in questions:
        started = time.perf_counter()
        retriever.search(q["question"], 10)
        times.append(time.perf_counter() - started)
    ms = np.asarray(times) * 1000
    return {
        "n": len(times),
        "p50": round(float(np.percentile(ms, 50)), 1),
        "p95": round(float(np.percentile(ms, 95)), 1),
    }


RERANK_GRID: tuple[float | None, ...] = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, None)


def llm_picks(
    index: CorpusIndex, questions: list[dict], top: int, weights, model
) -> tuple[list[list[str]], list[list[float]], list[list[int]], list[float]]:
    """Hybrid top-10 ids and scores, and the positions of the top ``top`` the LLM names."""
    ids, scores, named, times = [], [], [], []
    for q in tqdm(questions, desc="LLM re-rank", unit="question"):
        hits = index.search(q["question"], k=10, weights=weights)
        started = time.perf_counter()
        named.append(ask_llm_ranking(model, q["question"], [h.text for h in hits[:top]]))
        times.append(time.perf_counter() - started)
        ids.append([h.table_id for h in hits])
        scores.append([h.score for h in hits])
    return ids, scores, named, times


def fused_ranks(ids, scores, named, gold, top: int, weight: float | None) -> list[int]:
    """Gold ranks after fusing the LLM picks into the top ``top`` with ``weight``."""
    lists = []
    for table_ids, table_scores, picks in zip(ids, scores, named, strict=True):
        order = fuse_llm_ranking(table_scores[:top], picks, weight)
        lists.append([table_ids[i] for i in order] + table_ids[top:])
    return ranks_of(lists, gold)


def llm_rerank(index: CorpusIndex, questions: list[dict], sample: int, top: int, weights) -> dict:
    """Hybrid vs hybrid + LLM re-rank: fusion weight tuned on a sample of A, reported on B."""
    from tablerag_agents.models import get_chat_model

    half = len(questions) // 2
    model = get_chat_model()
    report: dict[str, Any] = {"n_per_half": sample, "rerank_top": top}
    grid_hits: dict[str, dict[str, Any]] = {}
    for name, part in (("A", questions[:half]), ("B", questions[half:])):
        chosen = random.Random(0).sample(part, min(sample, len(part)))
        gold = [q["table_id"] for q in chosen]
        ids, scores, named, times = llm_picks(index, chosen, top, weights, model)
        grid_hits[name] = {
            str(w): hits_at(fused_ranks(ids, scores, named, gold, top, w)) for w in RERANK_GRID
        }
        report[f"seconds_per_question_{name}"] = round(float(np.mean(times)), 2)
        report[f"hybrid_{name}"] = hits_at(ranks_of(ids, gold))
        report[f"no_pick_rate_{name}"] = round(sum(not n for n in named) / len(named), 3)

    def objective(h: dict[str, float]) -> float:
        return h["hits@1"] + h["hits@5"]

    best = max(RERANK_GRID, key=lambda w: (objective(grid_hits["A"][str(w)]), w is not None))
    report["grid"] = grid_hits
    report["tuned_weight_on_A"] = best
    report["default_weight"] = DEFAULT_RERANK_WEIGHT
    report["hybrid+llm_B_tuned"] = grid_hits["B"][str(best)]
    report["hybrid+llm_B_default"] = grid_hits["B"][str(DEFAULT_RERANK_WEIGHT)]
    report["hybrid+llm_B_listwise"] = grid_hits["B"]["None"]
    return report


def main() -> None:
    """Run the benchmark, print a summary and write JSON."""
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    args = parse_args()
    out = result_path(DEFAULT_OUT, args.out, force=args.force)
    questions = json.loads(args.questions.read_text(encoding="utf-8"))
    embeddings = get_embeddings()
    config = CorpusConfig(rows=args.rows)
    index, timings = get_index(args, config, embeddings)
    known = [q for q in questions if q["table_id"] in index]
    if len(known) < len(questions):
        print(f"{len(questions) - len(known)} questions have a gold table outside the corpus")
    half = len(questions) // 2
    weights = index.weights
    tuning: dict[str, Any] = {}
    if args.tune:
        started = time.perf_counter()
        index.prime_queries([q["question"] for q in questions])
        cache = channel_score_cache(index, questions, weights.candidates)
        weights, tuning = tune_weights(cache, [q["table_id"] for q in questions], half, weights)
        tuning["seconds"] = round(time.perf_counter() - started, 1)
    started = time.perf_counter()
    index.prime_queries([q["question"] for q in questions])
    timings["batch_query_encoding_s"] = round(time.perf_counter() - started, 2)
    sample = random.Random(1).sample(questions, min(args.latency_sample, len(questions)))
    results: dict[str, Any] = {}
    for method in args.methods:
        if method in ("rows", "colbert") and method not in index.channels:
            continue
        w = weights if method in ("hybrid", "bm25_fields") else None
        index.prime_queries([q["question"] for q in questions])
        res = evaluate(index, method, questions, w)
        res["latency_ms"] = latency(index, method, sample, w) if sample else None
        results[method] = {k: v for k, v in res.items() if k != "ranks"}
        p50 = res["latency_ms"]["p50"] if sample else "-"
        print(f"{method:12s} {res['hits']['all']}  p50 {p50} ms", flush=True)
    sweep = {}
    for n in args.candidates:
        w = replace(weights, candidates=n)
        index.prime_queries([q["question"] for q in questions])
        res = evaluate(index, "hybrid", questions, w)
        sweep[str(n)] = {"hits": res["hits"], "latency_ms": latency(index, "hybrid", sample, w)}
        print(f"hybrid, {n} candidates per channel: {sweep[str(n)]}", flush=True)
    rerank = (
        llm_rerank(index, questions, args.rerank_sample, args.rerank_top, weights)
        if args.rerank_sample
        else None
    )
    report = {
        "questions": str(args.questions.name),
        "n_questions": len(questions),
        "n_tables": len(index),
        "halves": {"A": half, "B": len(questions) - half},
        "embeddings": embeddings_name(embeddings),
        "config": config.params(),
        "weights": asdict(weights),
        "index_timings": timings,
        "tuning": tuning,
        "methods": results,
        "candidates_sweep": sweep,
        "llm_rerank": rerank,
    }
    save_json(out, report)
    print_summary(report)
    print(f"saved {out}")


def print_summary(report: dict) -> None:
    """Print a readable table."""
    print(
        f"\nOTT-QA table retrieval: {report['n_questions']} questions, {report['n_tables']} tables"
    )
    print(f"index: {report['index_timings']}")
    print(
        f"{'method':14s} {'A h@1':>6s} {'A h@5':>6s} {'B h@1':>6s} {'B h@5':>6s} "
        f"{'all h@1':>7s} {'all h@5':>7s} {'all h@10':>8s} {'p50 ms':>7s} {'p95 ms':>7s}"
    )
    for name, res in report["methods"].items():
        h, lat = res["hits"], res["latency_ms"] or {"p50": float("nan"), "p95": float("nan")}
        print(
            f"{name:14s} {h['A']['hits@1']:6.3f} {h['A']['hits@5']:6.3f} {h['B']['hits@1']:6.3f} "
            f"{h['B']['hits@5']:6.3f} {h['all']['hits@1']:7.3f} {h['all']['hits@5']:7.3f} "
            f"{h['all']['hits@10']:8.3f} {lat['p50']:7.1f} {lat['p95']:7.1f}"
        )
    if report["llm_rerank"]:
        r = report["llm_rerank"]
        print(
            f"LLM re-rank of the top {r['rerank_top']} ({r['n_per_half']} questions per half, "
            f"{r['seconds_per_question_B']} s/question, no pick {r['no_pick_rate_B']:.0%} on B)"
        )
        for weight, on_a in r["grid"]["A"].items():
            print(f"  weight {weight:>5s}: A {on_a}  B {r['grid']['B'][weight]}")
        print(
            f"  hybrid B {r['hybrid_B']} -> tuned weight {r['tuned_weight_on_A']} "
            f"{r['hybrid+llm_B_tuned']}; listwise {r['hybrid+llm_B_listwise']}"
        )
    print(f"weights: {report['weights']}")


if __name__ == "__main__":
    main()
