"""Corpus scale-out: a synthetic corpus of OTT-QA-like tables on FAISS, Qdrant local, Milvus Lite.

The corpus holds the gold tables of a seeded sample of OTT-QA dev questions
(held-out half B, as in bench/retrieval_ottqa.py) and synthetic tables up to
--n-tables: each a seeded perturbation of a random OTT-QA table (title words
dropped, swapped or qualified; headers renamed, abbreviated or reordered; rows
sampled and shuffled, numbers jittered, cells swapped). Per backend, in its own
process (so peak memory is that backend's; Milvus Lite runs inside it): index
throughput (tables/s, embeddings included, added in batches as a large corpus
would be, --workers processes building texts and BM25 tokens; tables are not
stored, only indexed; index CPU seconds count this process only), peak RSS,
p50/p95 of one search (query encoding included) and of the engine's own dense
search, and HITS@1/5/10 of the questions mixed in. The load average is
recorded: the machine is shared. The parity line compares each backend's HITS@5
with FAISS's on the same questions.

Peak RSS is recorded after indexing, after saving and at the end. Before a run
the peak is projected from the peaks measured at 1k-10k tables (on FAISS) and
compared with --max-rss-mb and the memory available; while indexing,
the RSS so far is extrapolated to --n-tables, and a run whose RSS passes
--max-rss-mb stops with an error.

    python bench/scale_corpus.py --n-tables 2000                 # a small run (~minutes)
    python bench/scale_corpus.py --n-tables 100000 --backends faiss --max-rss-mb 12000
    python bench/scale_corpus.py --n-tables 10000 --backends faiss --candidates 30 20
    python bench/scale_corpus.py --qdrant-url http://localhost:6333   # a Qdrant server
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing as mp
import os
import random
import re
import resource
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
KS = (1, 5, 10)
METHODS = ("hybrid", "dense", "bm25")
DEFAULT_OUT = REPO / "bench" / "results" / "scale_corpus.json"
REFERENCE = REPO / "bench" / "results" / "retrieval_ottqa.json"
EMBED_CHUNK = 1024
QUALIFIERS = ("(archive)", "– revised", "season 2", "(list)", "records", "1998", "2011", "II")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import add_output_args, result_path, save_json  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--n-tables", type=int, default=100_000, help="corpus size (gold + synthetic)")
    ap.add_argument("--n-questions", type=int, default=200, help="OTT-QA questions mixed in")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--backends", default="faiss,qdrant,milvus")
    ap.add_argument("--batch", type=int, default=5000, help="tables per add_tables call")
    ap.add_argument("--latency-sample", type=int, default=100, help="questions timed one by one")
    ap.add_argument(
        "--torch-threads",
        type=int,
        default=0,
        help="torch.set_num_threads for the embeddings (0: torch's default)",
    )
    ap.add_argument(
        "--workers",
        type=int,
        default=1,
        help="processes building the tables' texts and BM25 tokens while this one embeds "
        "(1: all in this process, 0: one per core)",
    )
    ap.add_argument(
        "--max-rss-mb",
        type=float,
        default=0,
        help="refuse a run projected above this peak RSS, stop one that passes it (0: no limit)",
    )
    ap.add_argument(
        "--gold-copies",
        action="store_true",
        help="also perturb the gold tables into synthetic ones (the construction of runs "
        "before this flag existed): at 100k tables each gold table then has ~11 near-copies, "
        "and HITS@k by id measures which copy ranks first",
    )
    ap.add_argument("--qdrant-url", default=None, help="default: Qdrant local mode in the index")
    ap.add_argument("--milvus-url", default=None, help="default: a Milvus Lite file in the index")
    ap.add_argument(
        "--candidates",
        type=int,
        nargs="+",
        default=[],
        help="also compare hybrid search with these per-channel candidate counts: HITS@k, "
        "and latency timed interleaved with the default's on the same questions",
    )
    ap.add_argument(
        "--compare-query-backends",
        action="store_true",
        help="also time hybrid search with the query encoded on torch and on ONNX Runtime, "
        "taking turns on each timed question",
    )
    ap.add_argument("--workdir", type=Path, default=None, help="where indexes go (default: temp)")
    ap.add_argument("--tables", type=Path, default=DATA / "ottqa" / "tables.json")
    ap.add_argument("--questions", type=Path, default=DATA / "ottqa" / "dev_questions.json")
    ap.add_argument(
        "--wiki",
        default=str(DATA / "wiki" / "intros.jsonl.gz"),
        help="linked-page intros for the 'passages' field ('' to skip)",
    )
    add_output_args(ap, DEFAULT_OUT)
    return ap.parse_args(argv)


# ----------------------------------------------------------------------- corpus
def _perturb_title(title: str, rng: random.Random) -> str:
    words = title.split()
    if len(words) > 2 and rng.random() < 0.4:
        del words[rng.randrange(len(words))]
    if len(words) > 1 and rng.random() < 0.3:
        i = rng.randrange(len(words) - 1)
        words[i], words[i + 1] = words[i + 1], words[i]
    if rng.random() < 0.6:
        words.append(rng.choice(QUALIFIERS))
    return " ".join(words)


def _perturb_header(name: str, rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.2 and len(name) > 5:
        return name[:4] + "."
    if roll < 0.35:
        return name.lower()
    if roll < 0.45:
        return f"{name} (2)"
    return name


def _perturb_cell(value: Any, rng: random.Random) -> Any:
    text = str(value)
    if _NUMBER.match(text) and rng.random() < 0.5:
        number = float(text) * rng.uniform(0.9, 1.1)
        return str(round(number)) if "." not in text else f"{number:.2f}"
    return value


def synthetic_table(base: Any, n: int, rng: random.Random) -> Any:
    """A perturbed copy of ``base`` named ``syn-<n>`` (links kept for the passages field)."""
    from tablerag_agents.tables.model import Table

    df = base.df
    if len(df) > 1:
        keep = sorted(rng.sample(range(len(df)), max(1, int(len(df) * rng.uniform(0.5, 1.0)))))
        df = df.iloc[keep].sample(frac=1.0, random_state=rng.randrange(2**31))
    df = df.map(lambda v: _perturb_cell(v, rng)).reset_index(drop=True)
    columns = [_perturb_header(str(c), rng) for c in df.columns]
    df.columns = columns
    if len(columns) > 1 and rng.random() < 0.3:
        i = rng.randrange(len(columns) - 1)
        order = list(range(len(columns)))
        order[i], order[i + 1] = order[i + 1], order[i]
        df = df.iloc[:, order]
    if len(df) > 1 and len(df.columns) and rng.random() < 0.5:
        col = rng.randrange(len(df.columns))  # by position: headers may repeat
        a, b = rng.sample(range(len(df)), 2)
        df = df.copy()
        va, vb = df.iat[a, col], df.iat[b, col]
        df.iat[a, col], df.iat[b, col] = vb, va
    meta = dict(base.metadata)
    meta["source"] = f"synthetic from {base.id}"
    return Table(f"syn-{n:06d}", df, _perturb_title(base.caption, rng), meta)


def question_sample(path: Path, n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` questions of the held-out half B (second half of the file), seeded."""
    questions = json.loads(path.read_text(encoding="utf-8"))
    half_b = questions[len(questions) // 2 :]
    return random.Random(seed).sample(half_b, min(n, len(half_b)))


def corpus_batches(args: argparse.Namespace, gold: set[str], batch: int):
    """Yield the corpus in batches: the gold tables first, then synthetic tables.

    Synthetic tables are perturbed copies of the non-gold tables (of any table with
    ``--gold-copies``), so a question's gold table is the only table made from it.
    """
    from tablerag_agents.tables.ottqa import load_ottqa_corpus

    base = list(load_ottqa_corpus(args.tables))
    gold_tables = [t for t in base if t.id in gold]
    sources = base if args.gold_copies else [t for t in base if t.id not in gold]
    rng = random.Random(args.seed)
    n_synthetic = max(0, args.n_tables - len(gold_tables))
    chunk = list(gold_tables)
    for n in range(n_synthetic):
        chunk.append(synthetic_table(sources[rng.randrange(len(sources))], n, rng))
        if len(chunk) >= batch:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


# --------------------------------------------------------------------- measures
def hits_at(ranks: list[int]) -> dict[str, float]:
    """HITS@k for k in KS (rank 0: not in the top 10)."""
    arr = np.asarray(ranks)
    return {f"hits@{k}": round(float(((arr > 0) & (arr <= k)).mean()), 4) for k in KS}


def percentiles(seconds: list[float], cpu_seconds: list[float]) -> dict[str, float]:
    """p50/p95 in milliseconds of wall time, and p50 of the process's CPU time.

    On a shared machine the wall time also counts the waits for a core; the CPU
    time (all threads of this process, Milvus Lite's included) does not.
    """
    ms, cpu = np.asarray(seconds) * 1000, np.asarray(cpu_seconds) * 1000
    return {
        "n": len(ms),
        "p50": round(float(np.percentile(ms, 50)), 1),
        "p95": round(float(np.percentile(ms, 95)), 1),
        "cpu_p50": round(float(np.percentile(cpu, 50)), 1),
    }


def timed(fn: Any, *args: Any) -> tuple[float, float]:
    """Wall and process CPU seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn(*args)
    return time.perf_counter() - wall, time.process_time() - cpu


# ----------------------------------------------------------------------- memory
#: Peak RSS of a FAISS run ~ BASE + PER_TABLE * n_tables, fitted (from above) to the peaks
#: measured at 1k / 2k / 4k / 10k tables: 1,394 / 1,573 / 1,694 / 2,033-2,183 MB. BASE is the model,
#: the 8.9k OTT-QA base tables, the passages and a chunk's temporaries; per table, ~20 KB of
#: MaxSim token vectors (float16), ~9 KB of BM25 token ids, ~8 KB of BM25 matrices (built
#: at save), ~3 KB of dense vectors and small objects, plus allocator slack.
PROJECTION_BASE_MB = 1600.0
PROJECTION_PER_TABLE_KB = 60.0


def projected_peak_mb(n_tables: int) -> float:
    """Peak RSS projected for a FAISS run over ``n_tables`` tables."""
    return PROJECTION_BASE_MB + n_tables * PROJECTION_PER_TABLE_KB / 1024


def rss_mb() -> float:
    """This process's resident memory now."""
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mb() -> float:
    """This process's peak resident memory so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def available_mb() -> float | None:
    """MemAvailable of /proc/meminfo, or None where there is none."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class MemoryLimitError(RuntimeError):
    """The run's RSS passed --max-rss-mb."""


def check_memory(args: argparse.Namespace, n_done: int, first: tuple[int, float]) -> str:
    """The RSS so far and its extrapolation to --n-tables; raise past --max-rss-mb."""
    now = rss_mb()
    if args.max_rss_mb and now > args.max_rss_mb:
        raise MemoryLimitError(
            f"RSS {now:.0f} MB after {n_done} tables passed --max-rss-mb {args.max_rss_mb:.0f}"
        )
    n0, rss0 = first
    if n_done <= n0:
        return f"RSS {now:.0f} MB"
    projected = now + max(0.0, (now - rss0) / (n_done - n0)) * (args.n_tables - n_done)
    return f"RSS {now:.0f} MB (~{projected:.0f} MB at {args.n_tables} tables)"


def preflight(args: argparse.Namespace) -> None:
    """Print the projected peak RSS; exit when it passes --max-rss-mb."""
    projected = projected_peak_mb(args.n_tables)
    available = available_mb()
    print(
        f"projected peak RSS for {args.n_tables} tables on FAISS: ~{projected:.0f} MB "
        f"({PROJECTION_BASE_MB:.0f} MB + {PROJECTION_PER_TABLE_KB:.0f} KB per table)"
        + (f"; {available:.0f} MB available now" if available is not None else ""),
        flush=True,
    )
    if args.max_rss_mb and projected > args.max_rss_mb:
        raise SystemExit(
            f"projected peak RSS ~{projected:.0f} MB passes --max-rss-mb {args.max_rss_mb:.0f}: "
            "use fewer --n-tables or raise the limit"
        )
    if available is not None and projected > available:
        print(f"warning: the projection passes the {available:.0f} MB available", flush=True)


def engine_for(args: argparse.Namespace, backend: str, folder: Path) -> Any:
    """The engine config of one backend (local storage inside ``folder`` by default)."""
    from tablerag_agents.retrieval.engines import EngineConfig

    if backend == "qdrant":
        return EngineConfig("qdrant", args.qdrant_url or str(folder / "qdrant"))
    if backend == "milvus":
        return EngineConfig("milvus", args.milvus_url or str(folder / "vectors.db"))
    return EngineConfig()


def add_batch(index: Any, pool: Any, ahead: list[Any], batch: Any, passages: Any) -> None:
    """Index one batch (None: flush); with a pool, the next batch is prepared while one embeds.

    ``add_tables`` embeds 1,024 tables at a time; a pooled batch is embedded in
    chunks of that size too (its prepared texts and tokens are held meanwhile).
    """
    if pool.workers == 1:
        if batch is not None:
            index.add_tables(batch, passages=passages, progress=False)
        return
    if batch is not None:
        ahead.append(pool.submit(batch, [None] * len(batch)))
    if len(ahead) > 1 or (batch is None and ahead):
        prepared, _ = pool.collect(ahead.pop(0))
        for start in range(0, len(prepared), EMBED_CHUNK):
            part = prepared[start : start + EMBED_CHUNK]
            index.add_prepared(part, index.encode(part))


def run_backend(args: argparse.Namespace, backend: str, folder: str) -> dict[str, Any]:
    """Build, save and query one backend's index (runs in a child process)."""
    logging.basicConfig(level=logging.WARNING)
    if args.torch_threads:
        import torch

        torch.set_num_threads(args.torch_threads)
    from tablerag_agents.models import get_embeddings
    from tablerag_agents.retrieval.corpus import CorpusIndex
    from tablerag_agents.retrieval.corpus_fields import LinkedPassages
    from tablerag_agents.retrieval.corpus_prep import PrepContext, PrepPool

    started = time.perf_counter()
    load_before = os.getloadavg()
    questions = question_sample(args.questions, args.n_questions, args.seed)
    passages = LinkedPassages.from_jsonl(args.wiki) if args.wiki else None
    embeddings = get_embeddings()
    prepare_s = time.perf_counter() - started
    path = Path(folder) / backend
    index = CorpusIndex(embeddings, engine=engine_for(args, backend, path), store_tables=False)
    indexing = indexing_cpu = 0.0
    first: tuple[int, float] | None = None
    with index, PrepPool(PrepContext(index.config, passages), args.workers) as pool:
        ahead: list[Any] = []
        for batch in corpus_batches(args, {q["table_id"] for q in questions}, args.batch):
            wall, cpu = timed(add_batch, index, pool, ahead, batch, passages)
            del batch  # not held while the next batch is generated
            indexing, indexing_cpu = indexing + wall, indexing_cpu + cpu
            first = first or (len(index), rss_mb())
            memory = check_memory(args, len(index), first)
            print(
                f"  {backend}: {len(index)} tables, {len(index) / indexing:.1f}/s, {memory}",
                flush=True,
            )
        wall, cpu = timed(add_batch, index, pool, ahead, None, passages)
        indexing, indexing_cpu = indexing + wall, indexing_cpu + cpu
        peak_index = peak_rss_mb()
        t0 = time.perf_counter()
        index.save(path)
        save_s = time.perf_counter() - t0
        peak_save = peak_rss_mb()
        check_memory(args, len(index), first or (0, 0.0))
        sample = random.Random(1).sample(questions, min(args.latency_sample, len(questions)))
        latency = {}
        for method in METHODS:
            retriever = index.retriever(method)  # type: ignore[arg-type]
            retriever.search("warm up", 10)
            index.prime_queries([])  # no batch-encoded queries: each search encodes its own
            runs = [timed(retriever.search, q["question"], 10) for q in sample]
            latency[method] = percentiles([w for w, _ in runs], [c for _, c in runs])
        dense = index.channels["dense"]
        vectors = [dense.query_vector(q["question"]) for q in sample]  # type: ignore[attr-defined]
        runs = [timed(dense.search_by_vector, v, 10) for v in vectors]  # type: ignore[attr-defined]
        latency["dense_engine_only"] = percentiles([w for w, _ in runs], [c for _, c in runs])
        ranks = {method: gold_ranks(index, questions, method) for method in METHODS}
        sweep = candidates_sweep(index, args.candidates, questions, sample)
        backends = query_backends(index, sample) if args.compare_query_backends else {}
        n_tables = len(index)
    return {
        "backend": backend,
        "engine": index.engine.describe(),
        "n_tables": n_tables,
        "prepare_s": round(prepare_s, 1),
        "index_s": round(indexing, 1),
        "tables_per_s": round(n_tables / indexing, 1),
        "index_cpu_s": round(indexing_cpu, 1),
        "tables_per_cpu_s": round(n_tables / indexing_cpu, 1),
        "save_s": round(save_s, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "peak_rss_index_mb": round(peak_index, 1),
        "peak_rss_save_mb": round(peak_save, 1),
        "projected_peak_rss_mb": round(projected_peak_mb(n_tables), 1),
        "latency_ms": latency,
        "hits": {m: hits_at(r) for m, r in ranks.items()},
        "ranks": ranks,
        "candidates_sweep": sweep,
        "query_backends": backends,
        "wall_s": round(time.perf_counter() - started, 1),
        "load_average_1min": [round(load_before[0], 1), round(os.getloadavg()[0], 1)],
    }


def gold_ranks(
    index: Any, questions: list[dict[str, Any]], method: str, weights: Any = None
) -> list[int]:
    """Each question's 1-based rank of its gold table in the top 10 (0: absent)."""
    hits = index.search_many([q["question"] for q in questions], 10, method, weights=weights)
    ids = [[h.table_id for h in hs] for hs in hits]
    return [
        r.index(q["table_id"]) + 1 if q["table_id"] in r else 0
        for r, q in zip(ids, questions, strict=True)
    ]


def candidates_sweep(
    index: Any, counts: list[int], questions: list[dict[str, Any]], sample: list[dict[str, Any]]
) -> dict[str, Any]:
    """Hybrid search with the default candidate count and each of ``counts``.

    HITS@k per count over every question; latency per count over ``sample``, the
    counts taking turns on each question (so load changes hit them alike).
    """
    if not counts:
        return {}
    settings = [index.weights.candidates, *(n for n in counts if n != index.weights.candidates)]
    weights = {n: replace(index.weights, candidates=n) for n in settings}
    retrievers = {n: index.retriever("hybrid", weights=w) for n, w in weights.items()}
    out: dict[str, Any] = {"default": index.weights.candidates}
    for n, w in weights.items():
        out[str(n)] = {"hits": hits_at(gold_ranks(index, questions, "hybrid", w))}
    times: dict[int, list[tuple[float, float]]] = {n: [] for n in settings}
    for q in sample:
        for n, retriever in retrievers.items():
            index.prime_queries([])  # each timed search encodes its query
            times[n].append(timed(retriever.search, q["question"], 10))
    for n, runs in times.items():
        out[str(n)]["latency_ms"] = percentiles([w for w, _ in runs], [c for _, c in runs])
    return out


def query_backends(index: Any, sample: list[dict[str, Any]]) -> dict[str, Any]:
    """Hybrid search latency with the query encoded on ONNX Runtime and on torch, the two
    taking turns on each question of ``sample`` (so load changes hit them alike)."""
    inner = getattr(index.channels["dense"].embeddings, "inner", None)
    if inner is None or not hasattr(inner, "query_backend"):
        return {"error": "the index's embeddings have no query backend to switch"}
    retriever = index.retriever("hybrid")
    saved = inner.query_backend
    times: dict[str, list[tuple[float, float]]] = {"onnx": [], "torch": []}
    try:
        for i, q in enumerate(sample):
            for backend in ("onnx", "torch") if i % 2 else ("torch", "onnx"):
                inner.query_backend = backend
                index.prime_queries([])  # each timed search encodes its query
                times[backend].append(timed(retriever.search, q["question"], 10))
    finally:
        inner.query_backend = saved
    out: dict[str, Any] = {
        b: percentiles([w for w, _ in runs], [c for _, c in runs]) for b, runs in times.items()
    }
    out["onnx_in_use"] = inner._onnx_encoder() is not None
    return out


def _child(args: argparse.Namespace, backend: str, folder: str, queue: Any) -> None:
    try:
        queue.put(run_backend(args, backend, folder))
    except BaseException as exc:  # report the failure instead of hanging the parent
        queue.put({"backend": backend, "error": f"{type(exc).__name__}: {exc}"})


def parity(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each backend's HITS@5 (hybrid) minus FAISS's, and the questions whose hit changed."""
    base = results.get("faiss")
    if not base or "ranks" not in base:
        return {}
    out = {}
    for name, res in results.items():
        if name == "faiss" or "ranks" not in res:
            continue
        a, b = np.asarray(base["ranks"]["hybrid"]), np.asarray(res["ranks"]["hybrid"])
        hit_a, hit_b = (a > 0) & (a <= 5), (b > 0) & (b <= 5)
        out[name] = {
            "hits@5_minus_faiss": round(float(hit_b.mean() - hit_a.mean()), 4),
            "questions_differing": int((hit_a != hit_b).sum()),
            "same_ranks": int((a == b).sum()),
        }
    return out


def reference() -> dict[str, Any] | None:
    """The 8,891-table figure (hybrid, held-out half B) from bench/retrieval_ottqa.py."""
    if not REFERENCE.is_file():
        return None
    data = json.loads(REFERENCE.read_text(encoding="utf-8"))
    return {"n_tables": data["n_tables"], "hybrid_B": data["methods"]["hybrid"]["hits"]["B"]}


def main() -> None:
    """Run every backend in its own process, then write the JSON summary."""
    args = parse_args()
    out = result_path(DEFAULT_OUT, args.out, force=args.force)
    preflight(args)
    started = time.perf_counter()
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(dir=args.workdir) as folder:
        context = mp.get_context("spawn")
        for backend in args.backends.split(","):
            print(f"{backend}: indexing {args.n_tables} tables", flush=True)
            queue = context.Queue()
            child = context.Process(target=_child, args=(args, backend, folder, queue))
            child.start()
            results[backend] = queue.get()
            child.join()
            res = results[backend]
            if "error" in res:
                print(f"{backend}: {res['error']}", flush=True)
                continue
            print(
                f"{backend}: {res['tables_per_s']} tables/s, peak {res['peak_rss_mb']} MB, "
                f"hybrid p50/p95 {res['latency_ms']['hybrid']['p50']}/"
                f"{res['latency_ms']['hybrid']['p95']} ms, hybrid {res['hits']['hybrid']}",
                flush=True,
            )
    report = {
        "n_tables": args.n_tables,
        "n_questions": args.n_questions,
        "seed": args.seed,
        "gold_copies": args.gold_copies,
        "batch": args.batch,
        "torch_threads": args.torch_threads or "default",
        "workers": args.workers,
        "max_rss_mb": args.max_rss_mb or None,
        "passages": bool(args.wiki),
        "backends": {k: {n: v for n, v in r.items() if n != "ranks"} for k, r in results.items()},
        "parity_vs_faiss": parity(results),
        "reference_8891_tables": reference(),
        "targets": {"index_100k_s": 900, "hybrid_p50_ms": 50, "hits@5_vs_reference": 0.01},
        "wall_s": round(time.perf_counter() - started, 1),
    }
    save_json(out, report)
    print(json.dumps(report["parity_vs_faiss"], indent=1))
    print(f"saved {out} ({report['wall_s']} s)")


if __name__ == "__main__":
    main()
