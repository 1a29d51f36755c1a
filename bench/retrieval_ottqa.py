"""OTT-QA table retrieval: HITS@1/5/10 of every CorpusIndex method, timings, LLM re-rank.

Questions are split into two fixed halves (first / second half of the file):
weights are tuned on half A only (``--tune``) and every number is reported on
A, B and all questions.

    python bench/retrieval_ottqa.py                       # build or load the index, evaluate
    python bench/retrieval_ottqa.py --rows --index-dir DIR  # + the row-document channel
    python bench/retrieval_ottqa.py --tune                # also re-tune hybrid weights on half A
    python bench/retrieval_ottqa.py --rerank-sample 100   # + LLM re-rank on 100 questions of B
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from tablerag_agents.errors import IndexNotFoundError, StaleIndexError
from tablerag_agents.models.embeddings import embeddings_name, get_embeddings
from tablerag_agents.retrieval.corpus import CorpusIndex
from tablerag_agents.retrieval.corpus_config import CorpusConfig, HybridWeights
from tablerag_agents.retrieval.corpus_fields import LinkedPassages
from tablerag_agents.tables.ottqa import load_ottqa_corpus

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _retrieval_tuning import channel_score_cache, tune_weights  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
KS = (1, 5, 10)
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
        help="questions of half B to re-rank with the chat model (0 = skip)",
    )
    ap.add_argument("--rerank-top", type=int, default=5)
    ap.add_argument("--latency-sample", type=int, default=100, help="questions timed one by one")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "retrieval_ottqa.json")
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


def llm_rerank(index: CorpusIndex, questions: list[dict], sample: int, top: int, weights) -> dict:
    """Hybrid vs hybrid + LLM re-rank on a fixed random sample of half B."""
    from tablerag_agents.models import get_chat_model

    half_b = questions[len(questions) // 2 :]
    chosen = random.Random(0).sample(half_b, min(sample, len(half_b)))
    model = get_chat_model()
    base, reranked, times = [], [], []
    for q in chosen:
        hits = index.search(q["question"], k=10, weights=weights)
        started = time.perf_counter()
        again = index.search(
            q["question"], k=10, weights=weights, rerank_model=model, rerank_top=top
        )
        times.append(time.perf_counter() - started)
        base.append([h.table_id for h in hits])
        reranked.append([h.table_id for h in again])
    gold = [q["table_id"] for q in chosen]
    return {
        "n": len(chosen),
        "rerank_top": top,
        "hybrid": hits_at(ranks_of(base, gold)),
        "hybrid+llm": hits_at(ranks_of(reranked, gold)),
        "seconds_per_question": round(float(np.mean(times)), 2),
    }


def main() -> None:
    """Run the benchmark, print a summary and write JSON."""
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    args = parse_args()
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
        res["latency_ms"] = latency(index, method, sample, w)
        results[method] = {k: v for k, v in res.items() if k != "ranks"}
        print(f"{method:12s} {res['hits']['all']}  p50 {res['latency_ms']['p50']} ms", flush=True)
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
        "llm_rerank": rerank,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print_summary(report)


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
        h, lat = res["hits"], res["latency_ms"]
        print(
            f"{name:14s} {h['A']['hits@1']:6.3f} {h['A']['hits@5']:6.3f} {h['B']['hits@1']:6.3f} "
            f"{h['B']['hits@5']:6.3f} {h['all']['hits@1']:7.3f} {h['all']['hits@5']:7.3f} "
            f"{h['all']['hits@10']:8.3f} {lat['p50']:7.1f} {lat['p95']:7.1f}"
        )
    if report["llm_rerank"]:
        r = report["llm_rerank"]
        print(
            f"LLM re-rank (top {r['rerank_top']}, {r['n']} questions of B, "
            f"{r['seconds_per_question']} s/question): hybrid {r['hybrid']} -> {r['hybrid+llm']}"
        )
    print(f"weights: {report['weights']}")


if __name__ == "__main__":
    main()
