"""Latency of encoding one query with the embedded MiniLM on torch: query_threads=1 against
torch's default (ONNX Runtime, the default for one query: ``bench/query_encoder.py``).

Encodes --n OTT-QA dev questions one by one, through ``embed_query`` and
through the shared dense + MaxSim query pass the corpus search uses, with
``query_threads=None`` (torch's default thread count) and ``query_threads=1``,
alternating the two settings --rounds times (the machine is shared: the load
average is recorded).

    nice -n 19 python bench/query_threads.py --n 50
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
DEFAULT_OUT = REPO / "bench" / "results" / "query_threads.json"

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import add_output_args, result_path, save_json  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--n", type=int, default=50, help="questions encoded one by one")
    ap.add_argument("--rounds", type=int, default=2, help="alternations of the two settings")
    ap.add_argument("--questions", type=Path, default=DATA / "ottqa" / "dev_questions.json")
    add_output_args(ap, DEFAULT_OUT)
    return ap.parse_args(argv)


def _ms(seconds: list[float]) -> dict[str, float]:
    return {
        "p50": round(statistics.median(seconds) * 1000, 1),
        "mean": round(statistics.fmean(seconds) * 1000, 1),
    }


def measure(questions: list[str], threads: int | None) -> dict[str, Any]:
    """Per-query milliseconds of ``embed_query`` and of the shared query pass."""
    from tablerag_agents.models.embeddings import SentenceTransformerEmbeddings, local_minilm_path
    from tablerag_agents.retrieval.colbert import SharedQueryEncoder

    embeddings = SentenceTransformerEmbeddings(
        local_minilm_path(), query_threads=threads, query_backend="torch"
    )
    embeddings.embed_query("warm up")
    shared = SharedQueryEncoder(embeddings)
    plain, passes = [], []
    for question in questions:
        start = time.perf_counter()
        embeddings.embed_query(question)
        plain.append(time.perf_counter() - start)
        start = time.perf_counter()
        shared.embed_query(question)
        passes.append(time.perf_counter() - start)
    return {"embed_query_ms": _ms(plain), "shared_pass_ms": _ms(passes)}


def main() -> None:
    """Alternate the two settings and save the per-setting latencies."""
    args = parse_args()
    out = result_path(DEFAULT_OUT, args.out, force=args.force)
    import torch

    questions = [
        q["question"] for q in json.loads(args.questions.read_text(encoding="utf-8"))[: args.n]
    ]
    runs: list[dict[str, Any]] = []
    load = [round(os.getloadavg()[0], 2)]
    for _ in range(args.rounds):
        for threads in (None, 1):
            result = {"query_threads": threads, **measure(questions, threads)}
            runs.append(result)
            print(result, flush=True)
    load.append(round(os.getloadavg()[0], 2))
    save_json(
        out,
        {
            "n": len(questions),
            "torch_default_threads": torch.get_num_threads(),
            "runs": runs,
            "load_average_1min": load,
        },
    )
    print(f"saved {out}")


if __name__ == "__main__":
    main()
