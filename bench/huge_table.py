"""A table bigger than memory: a generated Parquet file scanned out of core by DuckDB.

Generates a seeded ``sales`` table (--rows, default 50,000,000: order id, day,
region, product, customer with ~2M distinct values, quantity, price, status)
into a Parquet file in a separate process, then, in this process, opens it as a
:class:`~tablerag_agents.tables.source_remote.FileSource` and builds its
schema/cell index from pushed-down aggregate queries (DuckDB in a bounded
worker, memory limited by --memory-mb). Reports the build time, this process's
peak RSS and the worker's. With --questions, the SQL solver with the embedded
local model answers five aggregate questions on the file (slow: minutes).

    python bench/huge_table.py --rows 2000000            # a small run
    python bench/huge_table.py                           # 50M rows (~2.5 GB of Parquet)
    python bench/huge_table.py --rows 50000000 --questions
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "bench" / "results" / "huge_table.json"

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO))
from _results import add_output_args, result_path, save_json  # noqa: E402
from _source_bench import (  # noqa: E402
    REGIONS,
    STATUSES,
    build_index,
    machine,
    peak_rss_mb,
    run_questions,
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rows", type=int, default=50_000_000, help="rows of the generated table")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--file", type=Path, default=None, help="Parquet file (default: temp)")
    ap.add_argument("--keep", action="store_true", help="keep a generated temp file")
    ap.add_argument("--memory-mb", type=int, default=1024, help="DuckDB memory while profiling")
    ap.add_argument("--threads", type=int, default=1, help="DuckDB threads")
    ap.add_argument("--budget", type=int, default=10_000, help="cell budget B")
    ap.add_argument("--retriever", default="bm25", choices=("bm25", "dense", "hybrid"))
    ap.add_argument("--questions", action="store_true", help="also run the SQL solver (model)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per model query")
    add_output_args(ap, DEFAULT_OUT)
    return ap.parse_args(argv)


def generate(path: str, rows: int, seed: int, memory_mb: int) -> None:
    """Write the seeded table with DuckDB, streamed (run in a child process)."""
    import duckdb

    con = duckdb.connect(config={"memory_limit": f"{memory_mb}MB", "threads": 2})
    regions = "[" + ", ".join(f"'{r}'" for r in REGIONS) + "]"
    statuses = "[" + ", ".join(f"'{s}'" for s in STATUSES) + "]"
    h = f"hash((range + {seed} * 1000003)"  # one seeded hash per column: {h} * k)
    con.execute(
        f"""COPY (
        SELECT range AS order_id,
               DATE '2020-01-01' + CAST({h} * 3) % 1461 AS INTEGER) AS day,
               {regions}[1 + CAST({h} * 5) % {len(REGIONS)} AS INTEGER)] AS region,
               'product ' || CAST({h} * 7) % 2000 AS VARCHAR) AS product,
               'customer ' || CAST({h} * 11) % 2000000 AS VARCHAR) AS customer,
               CAST(1 + {h} * 13) % 10 AS INTEGER) AS quantity,
               round(CAST({h} * 17) % 100000 AS DOUBLE) / 100, 2) AS price,
               {statuses}[1 + CAST({h} * 19) % {len(STATUSES)} AS INTEGER)] AS status
        FROM range({rows})
        ) TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 122880)"""
    )
    con.close()


def main(argv: list[str] | None = None) -> int:
    """Generate, index, report."""
    args = parse_args(argv)
    out = result_path(DEFAULT_OUT, args.out, force=args.force)
    from tablerag_agents.tables.source import SourceSettings
    from tablerag_agents.tables.source_remote import FileSource
    from tablerag_agents.tables.source_tables import source_table

    folder = Path(tempfile.mkdtemp(prefix="huge-table-"))
    path = args.file or folder / "sales.parquet"
    gen_s = 0.0
    if not path.exists():
        print(f"generating {args.rows:,} rows into {path} ...")
        started = time.perf_counter()
        child = mp.get_context("spawn").Process(
            target=generate, args=(str(path), args.rows, args.seed, args.memory_mb)
        )
        child.start()
        child.join()
        if child.exitcode != 0:
            raise SystemExit(f"generation failed (exit {child.exitcode})")
        gen_s = time.perf_counter() - started
    size_mb = path.stat().st_size / 2**20
    print(f"file: {size_mb:,.0f} MB (generated in {gen_s:.1f}s)")
    settings = SourceSettings(memory_mb=args.memory_mb, threads=args.threads)
    started = time.perf_counter()
    table = source_table(FileSource(path, settings=settings), id="sales", caption="sales")
    open_s = time.perf_counter() - started
    print(f"opened: {table.n_rows:,} rows x {table.n_cols} columns in {open_s:.1f}s")
    result: dict[str, Any] = {
        "rows": table.n_rows,
        "file_mb": round(size_mb, 1),
        "generate_s": round(gen_s, 1),
        "open_s": round(open_s, 2),
        "memory_mb": args.memory_mb,
        "threads": args.threads,
        "budget": args.budget,
        "retriever": args.retriever,
        "machine": machine(),
    }
    result["index"] = build_index(table, args.retriever, args.budget)
    index = result["index"]
    print(
        f"index: {index['seconds']:.1f}s (aggregates {index['extract_s']:.1f}s), "
        f"{index['n_cells']:,} cells of {index['n_distinct']:,} distinct; peak RSS: "
        f"ours {index['host_peak_rss_mb']:.0f} MB, worker {index['worker_peak_rss_mb']} MB"
    )
    if args.questions:
        result["questions"] = run_questions(table, args.timeout)
    result["host_peak_rss_mb"] = round(peak_rss_mb(), 1)
    save_json(out, result)
    print(f"saved {out}")
    table.source.close()  # type: ignore[union-attr]
    if args.keep and args.file is None:
        print(f"kept {path}")
    else:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
