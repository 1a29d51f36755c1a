"""Latency of encoding one query with the embedded MiniLM: ONNX Runtime against torch.

Encodes --n OTT-QA dev questions one by one through the shared dense + MaxSim
query pass a corpus search uses (``SentenceTransformerEmbeddings.query_outputs``),
on torch and on ONNX Runtime in turns for each question (the machine is shared:
both see the same load; the load average is recorded), both on one thread. Also
records the largest difference between the two runtimes' vectors.

    python bench/query_encoder.py --n 200
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
DEFAULT_OUT = REPO / "bench" / "results" / "query_encoder.json"

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import add_output_args, result_path, save_json  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--n", type=int, default=200, help="questions encoded one by one")
    ap.add_argument("--questions", type=Path, default=DATA / "ottqa" / "dev_questions.json")
    add_output_args(ap, DEFAULT_OUT)
    return ap.parse_args(argv)


def _ms(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    return {
        "p50": round(statistics.median(seconds) * 1000, 2),
        "p95": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 2),
        "mean": round(statistics.fmean(seconds) * 1000, 2),
    }


def main(argv: list[str] | None = None) -> None:
    """Time both runtimes question by question and save the latencies."""
    args = parse_args(argv)
    out = result_path(DEFAULT_OUT, args.out, force=args.force)
    from tablerag_agents.models.embeddings import SentenceTransformerEmbeddings, local_minilm_path

    questions = [
        q["question"] for q in json.loads(args.questions.read_text(encoding="utf-8"))[: args.n]
    ]
    with tempfile.TemporaryDirectory() as onnx_dir:
        started = time.perf_counter()
        onnx = SentenceTransformerEmbeddings(local_minilm_path(), onnx_dir=onnx_dir)
        onnx.query_outputs("warm up")
        export_s = time.perf_counter() - started
        if onnx._onnx_encoder() is None:
            raise SystemExit("ONNX Runtime is not usable here (see the log): nothing to compare")
        torch_ = SentenceTransformerEmbeddings(local_minilm_path(), query_backend="torch")
        torch_.query_outputs("warm up")
        times: dict[str, list[float]] = {"torch": [], "onnx": []}
        diff = 0.0
        load = [round(os.getloadavg()[0], 2)]
        for i, question in enumerate(questions):
            order = (("torch", torch_), ("onnx", onnx))
            outputs = {}
            for name, embeddings in order if i % 2 else order[::-1]:
                start = time.perf_counter()
                outputs[name] = embeddings.query_outputs(question)
                times[name].append(time.perf_counter() - start)
            for a, b in zip(outputs["torch"], outputs["onnx"], strict=True):
                diff = max(diff, float(np.abs(a - b).max()))
        load.append(round(os.getloadavg()[0], 2))
    result = {
        "n": len(questions),
        "torch_ms": _ms(times["torch"]),
        "onnx_ms": _ms(times["onnx"]),
        "p50_ratio_torch_over_onnx": round(
            statistics.median(times["torch"]) / statistics.median(times["onnx"]), 2
        ),
        "max_abs_vector_difference": diff,
        "first_load_with_export_s": round(export_s, 1),
        "load_average_1min": load,
    }
    print(json.dumps(result, indent=1))
    save_json(out, result)
    print(f"saved {out}")


if __name__ == "__main__":
    main()
