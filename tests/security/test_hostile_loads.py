"""Hostile table files and SQL cost the host process nothing: the bounded worker pays.

One fresh Python process loads every hostile file (and runs the SQL bomb) with
small limits, its own address space capped at 3 GB and its run at 240 s, and
reports each outcome and its own peak RSS. Each test checks one input: a
:class:`TableLimitError` naming the limit that stopped it, and a host that
stayed small. Loaded in-process, the same files take GBs or never finish.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hostile_files as hostile  # noqa: E402

#: The host process of the run never grows past this (pandas + DuckDB + pyarrow: ~200 MB).
HOST_RSS_MB = 450

_RUNNER = r"""
import json, resource, sys, time, warnings
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

def peak_rss_mb():  # VmHWM: ru_maxrss would count the parent's pages at fork
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) // 1024 for line in fh if line.startswith("VmHWM"))
from tablerag_agents.tables import load_table
from tablerag_agents.solve.sql_engine import SafeDuckDB
import pandas as pd

try:
    from tablerag_agents.tables.limits import LoadLimits
except ImportError:  # the code before the bounded worker: run it as it is
    kwargs = {}
else:
    kwargs = {"limits": LoadLimits(memory_mb=256, cpu_seconds=1, wall_seconds=60,
                                   max_cells=1_000_000)}

def report(name, started, **outcome):
    outcome.update(name=name, seconds=time.perf_counter() - started,
                   host_rss_mb=peak_rss_mb())
    print(json.dumps(outcome), flush=True)

engine = SafeDuckDB({"t": pd.DataFrame({"a": [1, 2]})}, memory_limit="64MB", timeout_s=2)
for name, sql in [("sql_settings", "SELECT name, value FROM duckdb_settings()"),
                  ("sql_current_setting", "SELECT current_setting('secret_directory') AS s"),
                  ("sql_repeat_bomb", "SELECT length(repeat('x', 2000000000)) AS n")]:
    started = time.perf_counter()
    result = engine.run(sql)
    report(name, started, ok=result.ok, error_type=result.error_type, message=result.error,
           rows=len(result.rows))

for path in sys.argv[1:]:
    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            table = load_table(path, **kwargs)
        except BaseException as exc:
            report(path, started, error_type=type(exc).__name__, message=str(exc),
                   limit=getattr(exc, "limit", None))
        else:
            cells = [str(v) for v in table.df.astype(str).to_numpy().ravel()]
            report(path, started, shape=list(table.df.shape),
                   nul_cells=sum("\x00" in c for c in cells),
                   warnings=[str(w.message) for w in caught])
"""


def _build(folder: Path) -> dict[str, Path]:
    return {
        "parquet_dictionary_bomb": hostile.parquet_dictionary_bomb(folder / "dict.parquet"),
        "parquet_row_count_lie": hostile.parquet_row_count_lie(folder / "lie.parquet"),
        "duckdb_cross_join": hostile.duckdb_with_view(
            folder / "cross.duckdb", hostile.DUCKDB_CROSS_JOIN
        ),
        "duckdb_repeat_bomb": hostile.duckdb_with_view(
            folder / "repeat.duckdb", hostile.DUCKDB_REPEAT_BOMB
        ),
        "sqlite_zeroblob_bomb": hostile.sqlite_with_view(
            folder / "zeroblob.sqlite", hostile.SQLITE_ZEROBLOB_BOMB
        ),
        "xlsx_zip_bomb": hostile.xlsx_zip_bomb(folder / "bomb.xlsx", sheet_mb=20),
        "csv_huge_header": hostile.csv_huge_header(folder / "header.csv", header_mb=20),
        "deep_json": hostile.deep_json(folder / "deep.json"),
        "malformed_workbook": hostile.malformed_workbook(folder / "workbook.xlsx"),
        "csv_nul_after_64kb": hostile.csv_nul_after_sample(folder / "nul.csv"),
        # Last: loaded in-process these never end.
        "duckdb_endless_cte": hostile.duckdb_with_view(
            folder / "cte.duckdb", hostile.DUCKDB_ENDLESS_CTE
        ),
        "sqlite_endless_cte": hostile.sqlite_with_view(
            folder / "cte.sqlite", hostile.SQLITE_ENDLESS_CTE
        ),
    }


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Each input's outcome in the isolated run (a missing one hung or killed the run)."""
    files = _build(tmp_path_factory.mktemp("hostile"))
    try:
        proc = subprocess.run(  # -c puts the working directory (this checkout) first on sys.path
            [sys.executable, "-c", _RUNNER, *map(str, files.values())],
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        out = proc.stdout
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
    by_path = {str(p): name for name, p in files.items()}
    results: dict[str, dict[str, Any]] = {}
    for line in out.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            results[by_path.get(row["name"], row["name"])] = row
    return results


def _outcome(outcomes: dict[str, dict[str, Any]], name: str) -> dict[str, Any]:
    assert name in outcomes, f"{name}: no outcome (the run hung or died before it)"
    row = outcomes[name]
    assert row["host_rss_mb"] < HOST_RSS_MB, f"{name}: host peak RSS {row['host_rss_mb']} MB"
    return row


@pytest.mark.parametrize(
    ("name", "limits"),
    [
        ("parquet_dictionary_bomb", {"memory"}),
        ("parquet_row_count_lie", {"cells"}),
        ("duckdb_cross_join", {"cells"}),
        # Each 100 MB string takes CPU to build: a slow machine meets the 1 s first.
        ("duckdb_repeat_bomb", {"CPU time", "memory"}),
        ("duckdb_endless_cte", {"CPU time", "memory"}),  # DuckDB keeps every row it made
        ("sqlite_zeroblob_bomb", {"memory"}),
        ("sqlite_endless_cte", {"CPU time"}),
        ("xlsx_zip_bomb", {"CPU time", "memory"}),
        ("csv_huge_header", {"columns"}),
    ],
)
def test_hostile_file_stops_at_a_named_limit(
    outcomes: dict[str, dict[str, Any]], name: str, limits: set[str]
) -> None:
    row = _outcome(outcomes, name)
    assert row["error_type"] == "TableLimitError", row
    assert row["limit"] in limits, row
    assert "exceeded the " in row["message"] and " limit of " in row["message"], row
    assert row["seconds"] < 60, row


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("deep_json", "nested too deeply to parse"),
        ("malformed_workbook", "cannot read the excel file (XMLSyntaxError"),
    ],
)
def test_parser_failures_are_table_load_errors(
    outcomes: dict[str, dict[str, Any]], name: str, reason: str
) -> None:
    row = _outcome(outcomes, name)
    assert row["error_type"] == "TableLoadError", row
    assert reason in row["message"], row


def test_nul_bytes_past_the_first_64kb_are_removed_with_a_note(
    outcomes: dict[str, dict[str, Any]],
) -> None:
    row = _outcome(outcomes, "csv_nul_after_64kb")
    assert row.get("nul_cells") == 0 and row["shape"][1] == 2, row
    assert any("removed 1 NUL byte(s)" in w for w in row["warnings"]), row


def test_model_sql_repeat_bomb_stops_at_the_worker_memory_limit(
    outcomes: dict[str, dict[str, Any]],
) -> None:
    row = _outcome(outcomes, "sql_repeat_bomb")
    assert not row["ok"] and row["error_type"] == "MemoryLimit", row
    assert "memory limit of 64MB" in row["message"], row


@pytest.mark.parametrize("name", ["sql_settings", "sql_current_setting"])
def test_model_sql_cannot_read_duckdb_metadata(
    outcomes: dict[str, dict[str, Any]], name: str
) -> None:
    row = _outcome(outcomes, name)
    assert not row["ok"] and row["rows"] == 0, row
    assert row["error_type"] == "SQLRejectedError", row
    assert "query only the given tables" in row["message"], row
