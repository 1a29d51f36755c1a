"""A table that stays in PostgreSQL: indexed by pushed-down aggregates, never copied in.

Loads a seeded ``sales`` table (--rows, default 5,000,000; the same columns as
bench/huge_table.py) into PostgreSQL with one server-side ``INSERT ... SELECT
generate_series`` (nothing passes through this process), then opens it as a
:class:`~tablerag_agents.tables.source_remote.DatabaseSource` and builds its
schema/cell index from aggregate queries run by the server. Reports the build
time, this process's peak RSS and the worker's. With --questions, the SQL
solver with the embedded local model answers five aggregate questions on the
server (read-only session, statement timeout).

    python bench/postgres_table.py --dsn postgresql://me@127.0.0.1:5432/bench --rows 200000
    python bench/postgres_table.py --start-cluster                # a throwaway local cluster
    python bench/postgres_table.py --dsn postgresql://me@127.0.0.1/bench --questions
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "bench" / "results" / "postgres_table.json"

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
    ap.add_argument("--dsn", default=None, help="postgresql:// URL of a database to write into")
    ap.add_argument(
        "--start-cluster",
        action="store_true",
        help="start a throwaway cluster on loopback (Debian's postgresql; tests/server/pg_cluster)",
    )
    ap.add_argument("--rows", type=int, default=5_000_000, help="rows of the generated table")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--table", default="sales", help="table name (replaced if it exists)")
    ap.add_argument("--reuse", action="store_true", help="keep an existing table of that name")
    ap.add_argument("--budget", type=int, default=10_000, help="cell budget B")
    ap.add_argument("--retriever", default="bm25", choices=("bm25", "dense", "hybrid"))
    ap.add_argument("--questions", action="store_true", help="also run the SQL solver (model)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per model query")
    add_output_args(ap, DEFAULT_OUT)
    return ap.parse_args(argv)


def _array(values: tuple[str, ...]) -> str:
    return "ARRAY[" + ", ".join(f"'{v}'" for v in values) + "]"


def load(dsn: str, table: str, rows: int, seed: int) -> float:
    """Create and fill the table on the server; seconds taken."""
    import psycopg

    def h(k: int) -> str:  # one seeded hash per column
        return f"abs(hashint8((g + {seed}::bigint * 1000003) * {k}))"

    started = time.perf_counter()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP TABLE IF EXISTS "{table}"')
        conn.execute(
            f"""CREATE TABLE "{table}" AS SELECT
                g AS order_id,
                DATE '2020-01-01' + ({h(3)} % 1461)::int AS day,
                ({_array(REGIONS)})[1 + ({h(5)} % {len(REGIONS)})::int] AS region,
                'product ' || ({h(7)} % 2000) AS product,
                'customer ' || ({h(11)} % 2000000) AS customer,
                (1 + {h(13)} % 10)::int AS quantity,
                round(({h(17)} % 100000)::numeric / 100, 2)::float8 AS price,
                ({_array(STATUSES)})[1 + ({h(19)} % {len(STATUSES)})::int] AS status
            FROM generate_series(0, {rows - 1}) AS g"""
        )
        conn.execute(f'ANALYZE "{table}"')
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    """Load, index, report."""
    args = parse_args(argv)
    if (args.dsn is None) == (not args.start_cluster):
        raise SystemExit("give --dsn URL or --start-cluster")
    out = result_path(DEFAULT_OUT, args.out, force=args.force)
    cluster = None
    dsn = args.dsn
    if args.start_cluster:
        sys.path.insert(0, str(REPO / "tests" / "server"))
        from pg_cluster import PostgresCluster, pg_bin_dir

        bin_dir = pg_bin_dir()
        if bin_dir is None:
            raise SystemExit("PostgreSQL binaries not found (apt-get install postgresql)")
        cluster = PostgresCluster(bin_dir).start()
        dsn = cluster.create_database()
    try:
        return _run(args, dsn, out)
    finally:
        if cluster is not None:
            cluster.stop()


def _run(args: argparse.Namespace, dsn: str, out: Path) -> int:
    from tablerag_agents.tables.source import SourceSettings
    from tablerag_agents.tables.source_tables import load_database_table

    load_s = 0.0
    if not args.reuse:
        print(f"loading {args.rows:,} rows into {args.table} ...")
        load_s = load(dsn, args.table, args.rows, args.seed)
    started = time.perf_counter()
    table = load_database_table(dsn, args.table, settings=SourceSettings())
    open_s = time.perf_counter() - started
    print(f"opened: {table.n_rows:,} rows x {table.n_cols} columns in {open_s:.1f}s")
    result: dict[str, Any] = {
        "rows": table.n_rows,
        "load_s": round(load_s, 1),
        "open_s": round(open_s, 2),
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
    assert table.source is not None
    table.source.close()
    save_json(out, result)
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
