"""Issue 10 item 2: every DuckDB and SQLite column type class loads, with exact values.

A DuckDB ``TIMESTAMP WITH TIME ZONE`` used to need ``pytz`` (DuckDB 1.x converts
it in Python) and came back in the host's time zone; it is now converted in
DuckDB and always loads as UTC. Values Python cannot hold exactly (intervals with
months, infinite dates) load as DuckDB's own text.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import subprocess
import sys
from contextlib import nullcontext
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pytest

from tablerag_agents.tables.cleaning import TableLoadWarning
from tablerag_agents.tables.loaders import load_table

UUID = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"

# (table name, DuckDB type, literal, expected first cell). The second row of each
# table is NULL.
DUCKDB_CASES: list[tuple[str, str, str, Any]] = [
    ("tinyint", "TINYINT", "-128", -128),
    ("smallint", "SMALLINT", "32767", 32767),
    ("integer", "INTEGER", "-7", -7),
    ("bigint", "BIGINT", str(2**63 - 5), 2**63 - 5),
    ("utinyint", "UTINYINT", "255", 255),
    ("usmallint", "USMALLINT", "65535", 65535),
    ("uinteger", "UINTEGER", str(2**32 - 1), 2**32 - 1),
    ("ubigint", "UBIGINT", str(2**64 - 1), 2**64 - 1),
    ("hugeint", "HUGEINT", str(2**100), 2**100),
    ("uhugeint", "UHUGEINT", str(2**127), 2**127),
    ("decimal", "DECIMAL(10, 2)", "3.14", Decimal("3.14")),
    (
        "decimal38",
        "DECIMAL(38, 10)",
        "1234567890123456789.0123456789",
        Decimal("1234567890123456789.0123456789"),
    ),
    ("real", "REAL", "1.5", 1.5),
    ("double", "DOUBLE", "-2.25", -2.25),
    ("boolean", "BOOLEAN", "true", True),
    ("varchar", "VARCHAR", "'Lake Tuz'", "Lake Tuz"),
    ("blob", "BLOB", "'\\xAA\\xBB'", b"\xaa\xbb"),
    ("date", "DATE", "'2024-01-02'", pd.Timestamp("2024-01-02")),
    ("time", "TIME", "'03:04:05'", dt.time(3, 4, 5)),
    ("timestamp", "TIMESTAMP", "'2024-01-02 03:04:05.5'", pd.Timestamp("2024-01-02 03:04:05.5")),
    ("timestamp_s", "TIMESTAMP_S", "'2024-01-02 03:04:05'", pd.Timestamp("2024-01-02 03:04:05")),
    (
        "timestamp_ms",
        "TIMESTAMP_MS",
        "'2024-01-02 03:04:05.123'",
        pd.Timestamp("2024-01-02 03:04:05.123"),
    ),
    (
        "timestamp_ns",
        "TIMESTAMP_NS",
        "'2024-01-02 03:04:05.123456789'",
        pd.Timestamp("2024-01-02 03:04:05.123456"),
    ),
    (
        "timestamptz",
        "TIMESTAMPTZ",
        "'2024-01-02 03:04:05+02'",
        pd.Timestamp("2024-01-02 01:04:05", tz="UTC"),
    ),
    ("timetz", "TIMETZ", "'03:04:05+02'", "03:04:05+02"),
    ("interval", "INTERVAL", "'1 month 2 days 3 hours'", "1 month 2 days 03:00:00"),
    ("interval_exact", "INTERVAL", "'90 minutes'", "01:30:00"),
    ("uuid", "UUID", f"'{UUID}'", UUID),
    ("list", "INTEGER[]", "[1, 2]", "[1, 2]"),
    ("array", "INTEGER[2]", "[3, 4]", "[3, 4]"),
    ("struct", "STRUCT(a INTEGER, b VARCHAR)", "{'a': 1, 'b': 'y'}", '{"a": 1, "b": "y"}'),
    ("map", "MAP(VARCHAR, INTEGER)", "MAP {'k': 1}", '{"k": 1}'),
    ("enum", "mood", "'happy'", "happy"),
    ("union", "UNION(n INTEGER, s VARCHAR)", "5", 5),
    ("bit", "BIT", "'0101'", "0101"),
    ("varint", "VARINT", str(10**30), str(10**30)),
    ("json", "JSON", "'{\"a\": 1}'", '{"a": 1}'),
    ("date_inf", "DATE", "'infinity'", "infinity"),
    ("timestamp_inf", "TIMESTAMP", "'-infinity'", "-infinity"),
    ("timestamptz_inf", "TIMESTAMPTZ", "'infinity'", "infinity"),
]


@pytest.fixture(scope="module")
def duckdb_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("types") / "types.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute("CREATE TYPE mood AS ENUM ('sad', 'happy')")
    for name, sql_type, literal, _ in DUCKDB_CASES:
        conn.execute(f'CREATE TABLE "{name}" (v {sql_type})')
        conn.execute(f'INSERT INTO "{name}" VALUES (({literal})::{sql_type}), (NULL)')
    conn.execute(
        "CREATE VIEW mixed AS SELECT t.v AS ts, u.v AS id FROM timestamptz t, uuid u "
        "WHERE t.v IS NOT NULL AND u.v IS NOT NULL"
    )
    conn.close()
    return path


def _same_kind(value: Any, expected: Any) -> bool:
    """Whether ``value`` has the Python/numpy kind of ``expected`` (and the same zone)."""
    if isinstance(expected, pd.Timestamp):
        return isinstance(value, pd.Timestamp) and str(value.tz) == str(expected.tz)
    if isinstance(expected, bool):
        return isinstance(value, bool | np.bool_)
    if isinstance(expected, int):
        if isinstance(value, np.floating):  # an integer column with NULLs, as from CSV
            return float(value).is_integer() and int(value) == expected
        return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)
    if isinstance(expected, float):
        return isinstance(value, float | np.floating)
    return type(value) is type(expected)


@pytest.mark.parametrize(
    ("name", "expected"), [(c[0], c[3]) for c in DUCKDB_CASES], ids=[c[0] for c in DUCKDB_CASES]
)
def test_duckdb_type_loads_exactly(duckdb_file: Path, name: str, expected: Any) -> None:
    nested = name in ("list", "array", "struct", "map")
    with pytest.warns(TableLoadWarning, match="JSON strings") if nested else nullcontext():
        column = load_table(duckdb_file, table=name).df["v"]
    first = column.iloc[0]
    assert first == expected, f"{name}: {first!r} != {expected!r}"
    assert _same_kind(first, expected), f"{name}: {type(first)} is not {type(expected)}"
    assert pd.isna(column.iloc[1])


def test_duckdb_timestamptz_is_utc_whatever_the_host_time_zone(duckdb_file: Path) -> None:
    code = (
        "import sys\n"
        "from tablerag_agents.tables.loaders import load_table\n"
        "col = load_table(sys.argv[1], table='timestamptz').df['v']\n"
        "print(col.dt.tz, col.iloc[0].isoformat())\n"
    )
    for zone in ("Asia/Tokyo", "America/New_York"):
        env = dict(os.environ, TZ=zone)
        out = subprocess.run(
            [sys.executable, "-c", code, str(duckdb_file)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout.split()
        assert out == ["UTC", "2024-01-02T01:04:05+00:00"], zone


def test_duckdb_view_over_converted_types(duckdb_file: Path) -> None:
    df = load_table(duckdb_file, table="mixed").df
    assert df.to_dict("list") == {
        "ts": [pd.Timestamp("2024-01-02 01:04:05", tz="UTC")],
        "id": [UUID],
    }


def test_duckdb_nullable_bigint_keeps_every_digit(tmp_path: Path) -> None:
    path = tmp_path / "ids.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute("CREATE TABLE ids (id BIGINT, small INTEGER)")
    conn.execute(f"INSERT INTO ids VALUES ({2**62 + 1}, 1), (NULL, NULL)")
    conn.close()
    df = load_table(path).df
    assert df["id"].iloc[0] == 2**62 + 1
    assert pd.isna(df["id"].iloc[1])
    assert df["small"].iloc[0] == 1  # small numbers may stay a float column


@pytest.fixture(scope="module")
def sqlite_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("types") / "types.sqlite"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, empty, n NUMERIC, "
        "d DECIMAL(10, 5), day DATE, flag BOOLEAN, anything)"
    )
    conn.executemany(
        "INSERT INTO t VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?, ?)",
        [
            (2**62 + 1, 1.5, "Lake Tuz", b"\xaa\xbb", "3.0", "2.50", "2024-01-02", True, 1),
            (None, None, None, None, "abc", None, "2024-02-03", False, "x"),
            (-1, -0.25, "", b"", 7, 1e3, "2024-03-04", None, b"\x00"),
        ],
    )
    # TEXT that is not valid UTF-8 (written by another program).
    conn.execute("CREATE TABLE latin (s TEXT)")
    conn.execute("INSERT INTO latin VALUES (CAST(X'4C61632064C3A9' AS TEXT))")
    conn.execute("INSERT INTO latin VALUES (CAST(X'4C616320E9' AS TEXT))")
    conn.commit()
    conn.close()
    return path


def test_sqlite_storage_classes_and_affinities(sqlite_file: Path) -> None:
    df = load_table(sqlite_file, table="t").df
    i = df["i"].tolist()
    assert i[0] == 2**62 + 1 and pd.isna(i[1]) and i[2] == -1
    assert df["r"].iloc[0] == 1.5 and pd.isna(df["r"].iloc[1]) and df["r"].iloc[2] == -0.25
    assert df["s"].iloc[0] == "Lake Tuz" and pd.isna(df["s"].iloc[1])
    assert df["b"].iloc[0] == b"\xaa\xbb" and df["b"].iloc[2] == b""
    assert df["empty"].isna().all()
    # NUMERIC affinity: '3.0' is stored as the integer 3, 'abc' stays text.
    assert df["n"].tolist() == [3, "abc", 7]
    assert df["d"].iloc[0] == 2.5 and df["d"].iloc[2] == 1000
    assert df["day"].tolist() == [pd.Timestamp(f"2024-0{m}-0{m + 1}") for m in (1, 2, 3)]
    assert df["flag"].iloc[0] == 1 and df["flag"].iloc[1] == 0
    assert df["anything"].tolist() == [1, "x", b"\x00"]


def test_sqlite_text_that_is_not_utf8_loads_with_replacement(sqlite_file: Path) -> None:
    assert load_table(sqlite_file, table="latin").df["s"].tolist() == [
        "Lac dé",
        "Lac \ufffd",
    ]
