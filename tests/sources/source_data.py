"""A small sales table with no ties among its counts, as a DataFrame, SQLite and PostgreSQL."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pandas as pd

REGIONS = {"north": 250, "south": 150, "east": 100, "west": 60, "centre": 40}
PRODUCTS = dict(
    zip(
        [f"product {c}" for c in "abcdefghijkl"],
        [100, 90, 80, 70, 60, 50, 45, 35, 30, 20, 15, 5],
        strict=True,
    )
)
QUANTITIES = dict(zip(range(1, 11), [110, 100, 90, 80, 70, 60, 40, 30, 15, 5], strict=True))
N_ROWS = 600


def _column(counts: dict, rng: random.Random) -> list:
    values = [v for v, n in counts.items() for _ in range(n)]
    rng.shuffle(values)
    return values


def sales_frame() -> pd.DataFrame:
    """600 shuffled rows: id, region, product, quantity, price and a long free-text note."""
    rng = random.Random(7)
    return pd.DataFrame(
        {
            "order_id": list(range(1, N_ROWS + 1)),
            "region": _column(REGIONS, rng),
            "product": _column(PRODUCTS, rng),
            "quantity": _column(QUANTITIES, rng),
            "price": [round(2.5 + i * 1.25, 2) for i in range(N_ROWS)],
            "note": [f"order {i} " + "x" * 150 for i in range(N_ROWS)],
        }
    )


CREATE = (
    "CREATE TABLE sales (order_id INTEGER, region TEXT, product TEXT, quantity INTEGER, "
    "price DOUBLE PRECISION, note TEXT)"
)


def write_sqlite(path: Path) -> Path:
    """The sales table (and a second one) in a new SQLite file."""
    frame = sales_frame()
    with sqlite3.connect(path) as conn:
        conn.execute(CREATE.replace("DOUBLE PRECISION", "REAL"))
        conn.executemany(
            "INSERT INTO sales VALUES (?, ?, ?, ?, ?, ?)",
            list(frame.itertuples(index=False, name=None)),
        )
        conn.execute("CREATE TABLE other (x INTEGER)")
        conn.execute("INSERT INTO other VALUES (1)")
    conn.close()
    return path


def write_postgres(url: str) -> None:
    """The sales table and a sequence in the database at ``url``."""
    import psycopg

    frame = sales_frame()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(CREATE)
        with conn.cursor().copy("COPY sales FROM STDIN") as copy:
            for row in frame.itertuples(index=False, name=None):
                copy.write_row(row)
        conn.execute("CREATE SEQUENCE counter")


def row_count(url_or_path: str | Path) -> int:
    """Rows of ``sales`` read directly (not through the library)."""
    if isinstance(url_or_path, Path):
        with sqlite3.connect(url_or_path) as conn:
            return int(conn.execute("SELECT count(*) FROM sales").fetchone()[0])
    import psycopg

    with psycopg.connect(url_or_path) as conn:
        row = conn.execute("SELECT count(*) FROM sales").fetchone()
        assert row is not None
        return int(row[0])
