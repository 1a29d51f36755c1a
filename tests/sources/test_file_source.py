"""CSV and Parquet files bigger than the threshold: scanned out of core by DuckDB."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from fakes import ScriptedChatModel
from source_checks import assert_same_indexes_as_pandas, assert_solver_counts_all_rows
from source_data import N_ROWS, sales_frame

from tablerag_agents.solve.base import SolverContext
from tablerag_agents.solve.sql import SQLSolver
from tablerag_agents.solve.sql_engine import SourceSQL
from tablerag_agents.table_index.cells import cell_db_from_profiles
from tablerag_agents.tables import LoadLimits, load_table
from tablerag_agents.tables.model import Table
from tablerag_agents.tables.source import ProfileRequest, SourceSettings
from tablerag_agents.tables.source_remote import FileSource
from tablerag_agents.tables.source_tables import source_table

SMALL = SourceSettings(sample_rows=20, memory_mb=128, query_memory_mb=128)


@pytest.fixture
def sales_parquet(tmp_path: Path) -> Path:
    path = tmp_path / "sales.parquet"
    sales_frame().to_parquet(path, index=False)
    return path


@pytest.fixture
def big_csv(tmp_path: Path) -> Path:
    """A 1.7 MB CSV: past a 1 MB threshold."""
    path = tmp_path / "big.csv"
    con = duckdb.connect()
    con.execute(
        "COPY (SELECT range AS id, 'group ' || (range % 7) AS grp, range * 0.5 AS amount "
        f"FROM range(70000)) TO '{path}' (HEADER)"
    )
    con.close()
    return path


def test_big_file_stays_on_disk(big_csv: Path) -> None:
    table = load_table(big_csv, limits=LoadLimits(out_of_core_mb=1), source_settings=SMALL)
    assert isinstance(table.source, FileSource)
    assert len(table.df) == 20 and table.n_rows == 70_000
    assert table.source.columns() == [("id", "int"), ("grp", "text"), ("amount", "float")]
    small = load_table(big_csv, limits=LoadLimits(out_of_core_mb=2))  # under: loaded as before
    assert small.source is None and len(small.df) == 70_000


def _sales(path: Path) -> Table:
    return source_table(FileSource(path, settings=SMALL), id="sales", caption="", settings=SMALL)


def test_indexes_are_the_pandas_ones(sales_parquet: Path) -> None:
    assert_same_indexes_as_pandas(_sales(sales_parquet))


def test_sql_solver_counts_every_row(sales_parquet: Path) -> None:
    assert_solver_counts_all_rows(_sales(sales_parquet))


def test_a_sample_does_not_decide_a_missing_column_filter(sales_parquet: Path) -> None:
    """On an in-memory table ``"area" = 'nowhere'`` would be dropped (no cell resembles
    it); a source's frame is only a sample, so the model's retry gets the error."""
    model = ScriptedChatModel(
        [
            "```sql\nSELECT count(*) FROM t WHERE \"area\" = 'nowhere'\n```",
            "```sql\nSELECT count(*) FROM t WHERE \"region\" = 'north'\n```",
        ]
    )
    table = _sales(sales_parquet)
    ctx = SolverContext(
        question="how many orders came from the north area?",
        tables={table.id: table.df},
        sources={table.id: table.source} if table.source else {},
    )
    result = SQLSolver(model).solve(ctx)
    assert result.answer_items == ["250"] and model.remaining == 0
    assert not result.trace[0].ok and '"area"' in result.trace[0].code


def test_model_sql_reads_no_other_file(sales_parquet: Path, big_csv: Path) -> None:
    source = FileSource(sales_parquet, settings=SMALL)
    engine = SourceSQL(source, ["t", "sales"])
    assert engine.run("SELECT count(*) FROM t").rows == [(N_ROWS,)]
    for sql in (
        "SELECT * FROM read_csv('/etc/passwd')",
        f"SELECT * FROM read_csv('{big_csv}')",
        "SELECT * FROM read_text('/etc/hostname')",
        f"SELECT * FROM glob('{big_csv.parent}/*')",
        f"SELECT * FROM read_csv('{sales_parquet}/../{big_csv.name}')",
    ):
        result = engine.run(sql)
        assert not result.ok, sql
        assert "Permission Error" in (result.error or ""), result.error
    assert engine.run("SELECT current_setting('allowed_paths')").error_type == "SQLRejectedError"


def test_model_query_memory_is_bounded(sales_parquet: Path) -> None:
    engine = SourceSQL(FileSource(sales_parquet, settings=SMALL), ["t"], timeout_s=10)
    result = engine.run(
        "SELECT count(DISTINCT a.order_id * 1000000 + b.order_id || repeat('x', 2000)) "
        "FROM t AS a, t AS b"
    )
    assert not result.ok
    assert result.error_type in ("MemoryLimit", "OutOfMemoryException", "Timeout")


def test_high_cardinality_columns_are_ranked_over_a_prefix(sales_parquet: Path) -> None:
    # Tiny thresholds stand in for a file of billions of rows.
    settings = SourceSettings(
        sample_rows=20, max_exact_distinct=11, prefix_rows=100, exact_distinct_rows=500
    )
    source = FileSource(sales_parquet, settings=settings)
    profiles = {p.name: p for p in source.profile(ProfileRequest(budget=1000))}
    region, product = profiles["region"], profiles["product"]
    assert region.n_unique == 5 and region.cells is not None
    assert region.approximate  # HyperLogLog past 500 rows
    assert [v for v, _ in region.cells][:2] == ["north", "south"]  # ranked over every row
    assert sum(n for _, n in region.cells) == N_ROWS
    assert product.n_unique == 12 and product.cells is not None
    assert sum(n for _, n in product.cells) == 100  # > 11 distinct: the first 100 rows only
    cells = cell_db_from_profiles(list(profiles.values()), budget=1000)
    assert cells.allocation["product"] == len(product.cells) <= 12
    assert profiles["order_id"].examples and profiles["order_id"].skipped.startswith("int column")
