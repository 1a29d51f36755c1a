"""Scale benchmark: schema + cell index of a 1M-cell table vs a 100-row table.

Builds both tables with the same generator (10 mixed columns: ints, floats,
dates, categories of several cardinalities, free text), indexes them with the
real local MiniLM embeddings at budget B, and reports build time (extraction
vs embedding), prompt tokens for the same question, and memory.

    python bench/scale.py [--rows 100000] [--budget 10000] [--out FILE]  # bench/results/scale.json
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _results import add_output_args, result_path, save_json

from tablerag_agents.models.embeddings import SentenceTransformerEmbeddings, get_embeddings
from tablerag_agents.models.tokens import count_tokens
from tablerag_agents.table_index.prompt import build_table_context
from tablerag_agents.table_index.table_index import TableIndex, default_retriever_factory
from tablerag_agents.tables.model import Table

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "scale.json"

QUESTION = "How many orders did customer Maria Lopez place in Lyon that were delivered?"
SCHEMA_QUERIES = [QUESTION, "customer name", "city of the order", "order status"]
CELL_QUERIES = [QUESTION, "Maria Lopez", "Lyon", "delivered"]
FIRST = ["Maria", "John", "Wei", "Aisha", "Carlos", "Yuki", "Olga", "Kwame", "Priya", "Liam"]
LAST = ["Lopez", "Smith", "Chen", "Khan", "Silva", "Tanaka", "Ivanova", "Mensah", "Patel", "Brown"]
WORDS = "late early fragile gift express damaged refund praised slow quick box label".split()


def make_table(rows: int, seed: int = 0) -> Table:
    """Synthetic orders table with 10 columns of mixed kinds and cardinalities."""
    rng = np.random.default_rng(seed)
    countries = [f"Country {i}" for i in range(20)]
    cities = ["Lyon"] + [f"City {i}" for i in range(999)]
    products = [f"Product {i:05d}" for i in range(5000)]
    names = [
        f"{f} {last} {i}"
        for i, (f, last) in enumerate((FIRST[j % 10], LAST[(j // 10) % 10]) for j in range(50_000))
    ]
    names[0] = "Maria Lopez"
    comment_words = rng.choice(WORDS, size=(rows, 20))
    df = pd.DataFrame(
        {
            "order_id": np.arange(1, rows + 1),
            "amount": np.round(rng.gamma(2.0, 50.0, rows), 2),
            "order_date": pd.Timestamp("2015-01-01")
            + pd.to_timedelta(rng.integers(0, 3650, rows), unit="D"),
            "country": rng.choice(countries, rows),
            "city": rng.choice(cities, rows),
            "product": rng.choice(products, rows),
            "customer": rng.choice(names, rows),
            "status": rng.choice(["delivered", "shipped", "cancelled", "returned"], rows),
            "quantity": rng.integers(1, 51, rows),
            "comment": [" ".join(w) + f" (ticket {i})" for i, w in enumerate(comment_words)],
        }
    )
    # A frequent customer, so frequency truncation keeps her in the big table too.
    df.loc[: min(9, rows - 1), ["customer", "city", "status"]] = [
        "Maria Lopez",
        "Lyon",
        "delivered",
    ]
    return Table(id=f"orders_{rows}", df=df, caption="Online shop orders")


def rss_mb() -> float:
    """Current resident set size in MB (Linux /proc; falls back to the peak)."""
    status = Path("/proc/self/status")
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return peak_rss_mb()


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_one(
    table: Table, factory: Any, budget: int, k: int, schema_limit: int, cell_limit: int
) -> dict[str, Any]:
    """Index one table, answer the question's retrieval, and measure."""
    rss_before = rss_mb()
    started, cpu_started = time.perf_counter(), time.process_time()
    index = TableIndex.build(table, budget=budget, retriever_factory=factory)
    build_s = time.perf_counter() - started
    # CPU seconds of all threads: less sensitive to other jobs on a shared machine.
    build_cpu_s = time.process_time() - cpu_started
    rss_after = rss_mb()
    t0 = time.perf_counter()
    schema = index.search_schema(SCHEMA_QUERIES, k=k, limit=schema_limit)
    cells = index.search_cells(CELL_QUERIES, k=k, limit=cell_limit)
    search_s = time.perf_counter() - t0
    context = build_table_context(table, schema, cells)
    s = index.stats
    return {
        "rows": table.n_rows,
        "cols": table.n_cols,
        "cells": table.n_cells,
        "budget": budget,
        "n_schema": s.n_schema,
        "n_cell_entries": s.n_cells,
        "n_distinct_pairs": s.n_distinct,
        "skipped_columns": s.skipped_columns,
        "allocation": index.cells.allocation,
        "extract_s": round(s.extract_s, 3),
        "embed_schema_s": round(s.schema_index_s, 3),
        "embed_cells_s": round(s.cell_index_s, 3),
        "build_s": round(build_s, 3),
        "build_cpu_s": round(build_cpu_s, 3),
        "cells_per_s": round(s.n_cells / s.cell_index_s, 1) if s.cell_index_s else None,
        "search_s": round(search_s, 3),
        "retrieved_columns": [e.column for e in schema],
        "retrieved_cells": [f"{c.column}={c.value}" for c in cells],
        "prompt_chars": len(context),
        "prompt_tokens": count_tokens(context),
        "rss_before_mb": round(rss_before, 1),
        "rss_after_mb": round(rss_after, 1),
        "rss_delta_mb": round(rss_after - rss_before, 1),
        "context": context,
    }


def main() -> None:
    """Run the benchmark, print a summary and save JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=100_000, help="rows of the big table")
    ap.add_argument("--small-rows", type=int, default=100)
    ap.add_argument("--budget", type=int, default=10_000, help="cell budget B")
    ap.add_argument("--k", type=int, default=5, help="top-k per query")
    ap.add_argument("--schema-limit", type=int, default=5, help="columns kept after merging")
    ap.add_argument("--cell-limit", type=int, default=10, help="cells kept after merging")
    ap.add_argument(
        "--batch-size", type=int, default=256, help="embedding batch size (short cell texts)"
    )
    add_output_args(ap, DEFAULT_OUT)
    args = ap.parse_args()
    out = result_path(DEFAULT_OUT, args.out, force=args.force)

    rss_start = rss_mb()
    load_start = os.getloadavg()
    t0 = time.perf_counter()
    embeddings = get_embeddings()
    if isinstance(embeddings, SentenceTransformerEmbeddings):
        embeddings.batch_size = args.batch_size
    embeddings.embed_documents(["warm up"])
    model_load_s = time.perf_counter() - t0
    factory = default_retriever_factory("dense", embeddings)

    small = make_table(args.small_rows)
    limits = (args.k, args.schema_limit, args.cell_limit)
    small_res = run_one(small, factory, args.budget, *limits)
    t0 = time.perf_counter()
    big = make_table(args.rows)
    generate_s = time.perf_counter() - t0
    table_mb = big.df.memory_usage(deep=True).sum() / 2**20
    big_res = run_one(big, factory, args.budget, *limits)
    ratio = big_res["prompt_tokens"] / small_res["prompt_tokens"]

    result = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "embeddings": getattr(embeddings, "name", type(embeddings).__name__),
        "batch_size": args.batch_size,
        "load_average_start": list(load_start),
        "question": QUESTION,
        "k": args.k,
        "schema_limit": args.schema_limit,
        "cell_limit": args.cell_limit,
        "schema_queries": SCHEMA_QUERIES,
        "cell_queries": CELL_QUERIES,
        "model_load_s": round(model_load_s, 2),
        "rss_start_mb": round(rss_start, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "big_table_generate_s": round(generate_s, 2),
        "big_table_frame_mb": round(table_mb, 1),
        "small": small_res,
        "big": big_res,
        "prompt_token_ratio_big_over_small": round(ratio, 3),
        "load_average_end": list(os.getloadavg()),
        "targets": {"big_build_s_max": 60, "prompt_ratio_max": 1.1},
        "targets_met": {
            "build": big_res["build_s"] <= 60,
            "prompt_ratio": ratio <= 1.1,
        },
    }
    save_json(out, result)

    print(
        f"embeddings: {result['embeddings']} (load + warm-up {model_load_s:.1f}s), "
        f"batch {args.batch_size}; load average start/end "
        f"{result['load_average_start'][0]:.1f}/{result['load_average_end'][0]:.1f} "
        f"on {os.cpu_count()} CPUs (the machine is shared)"
    )
    header = f"{'':22}{'small':>14}{'big':>14}"
    print(header)
    for key in (
        "rows",
        "cells",
        "n_distinct_pairs",
        "n_cell_entries",
        "extract_s",
        "embed_schema_s",
        "embed_cells_s",
        "build_s",
        "build_cpu_s",
        "cells_per_s",
        "search_s",
        "prompt_tokens",
        "rss_delta_mb",
    ):
        print(f"{key:22}{small_res[key]!s:>14}{big_res[key]!s:>14}")
    print(
        f"big table frame: {table_mb:.0f} MB; peak RSS {result['peak_rss_mb']:.0f} MB "
        f"(start {rss_start:.0f} MB)"
    )
    print(
        f"prompt tokens big/small: {ratio:.3f} (target <= 1.1); "
        f"big build {big_res['build_s']:.1f}s wall, {big_res['build_cpu_s']:.1f} CPU-s over "
        f"{os.cpu_count()} cores (target <= 60s)"
    )
    print(f"big allocation: {big_res['allocation']}")
    print(f"big skipped: {list(big_res['skipped_columns'])}")
    print("big prompt context:\n" + big_res["context"])
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
