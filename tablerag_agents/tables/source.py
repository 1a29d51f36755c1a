"""Tables that are not in pandas: the :class:`TableSource` seam and its settings.

A source is a table that stays where it is (a database table, a CSV or Parquet
file too big for memory) and answers a few bounded questions about itself:
its columns, its row count, per-column profiles for the schema and cell
databases (pushed-down aggregates: distinct values with counts, the most
frequent kept), a bounded sample of rows, and one read-only SELECT with its
result capped. Implementations: :class:`~tablerag_agents.tables.source_remote.DatabaseSource`
(a SQLAlchemy URL and a table name) and
:class:`~tablerag_agents.tables.source_remote.FileSource` (a CSV/Parquet file
scanned out of core by DuckDB). In-memory tables are plain
:class:`~tablerag_agents.tables.model.Table` frames and keep their own paths.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from tablerag_agents.tables.values import ColumnKind


class SourceSettings(BaseSettings):
    """Limits of working on a table in place (env ``TABLERAG_SOURCE_*``)."""

    model_config = SettingsConfigDict(env_prefix="TABLERAG_SOURCE_", extra="ignore", frozen=True)

    sample_rows: int = Field(
        default=1000, ge=1, le=100_000, description="Rows of the sample the Python side gets."
    )
    profile_seconds: float = Field(
        default=900.0, gt=0, description="Time one profiling pass (schema + cells) may take."
    )
    memory_mb: int = Field(
        default=1024, ge=64, description="DuckDB's memory limit while profiling a file."
    )
    query_memory_mb: int = Field(
        default=512, ge=64, description="DuckDB's memory limit for one model query on a file."
    )
    worker_memory_mb: int = Field(
        default=512, ge=64, description="Memory a worker may add beyond DuckDB's limit."
    )
    threads: int = Field(default=1, ge=1, le=64, description="DuckDB threads on a file.")
    max_exact_distinct: int = Field(
        default=1_000_000,
        ge=1,
        description="A column with more distinct values is ranked over its first prefix_rows.",
    )
    prefix_rows: int = Field(
        default=1_000_000, ge=1, description="Rows ranked for a very high-cardinality column."
    )
    exact_distinct_rows: int = Field(
        default=10_000_000,
        ge=1,
        description="Above this many rows a file's distinct counts are HyperLogLog estimates.",
    )


@dataclass(frozen=True)
class ProfileRequest:
    """What the schema and cell databases need from every column (see ``table_index``)."""

    budget: int = 10_000
    max_examples: int = 3
    example_chars: int = 50
    max_value_chars: int = 100
    categorical_limit: int = 20
    include_numeric: bool = False


@dataclass(frozen=True)
class ColumnProfile:
    """One column summarised by aggregate queries (values already formatted as text).

    Attributes:
        name: Column name.
        kind: ``int``, ``float``, ``bool``, ``datetime`` or ``text``.
        n_unique: Distinct non-missing values (an estimate when ``approximate``).
        n_missing: Missing cells.
        examples: Most frequent values, cut to ``example_chars``.
        min: Smallest value (numeric/datetime columns).
        max: Largest value.
        cells: Most frequent cell-database values with their counts, most frequent
            first (at most the budget); ``None`` when the column is left out.
        n_cells: Distinct values eligible for the cell database.
        skipped: Why the column is left out of the cell database.
        approximate: Counts are estimates (HyperLogLog, or ranked over a prefix).
    """

    name: str
    kind: ColumnKind
    n_unique: int
    n_missing: int
    examples: tuple[str, ...] = ()
    min: str | None = None
    max: str | None = None
    cells: tuple[tuple[str, int], ...] | None = None
    n_cells: int = 0
    skipped: str = ""
    approximate: bool = False


@dataclass
class QueryOutcome:
    """One read-only query: the capped rows, or an error."""

    ok: bool
    columns: list[str] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    truncated: bool = False
    error: str | None = None
    error_type: str | None = None
    timed_out: bool = False
    seconds: float = 0.0


class TableSource(ABC):
    """A table answered where it lives, without loading it whole.

    Attributes:
        name: The table's own name in SQL (always queryable under it).
        label: A description safe to show (no password).
    """

    name: str
    label: str

    @abstractmethod
    def columns(self) -> list[tuple[str, ColumnKind]]:
        """Column names with their kinds, in table order."""

    @abstractmethod
    def n_rows(self) -> int:
        """Number of rows (counted once)."""

    @abstractmethod
    def profile(self, request: ProfileRequest) -> list[ColumnProfile]:
        """One profile per column, from aggregate queries run where the table lives."""

    @abstractmethod
    def sample(self, n: int) -> pd.DataFrame:
        """At most ``n`` rows (the first ones), as a DataFrame."""

    @abstractmethod
    def query(
        self,
        sql: str,
        *,
        names: list[str],
        timeout_s: float,
        max_rows: int,
        max_cells: int,
    ) -> QueryOutcome:
        """Run one SELECT read-only, the table also visible as each of ``names``.

        The caller checks the text first as a courtesy; the boundary is the
        source's own session (a read-only transaction with a statement timeout,
        a read-only file, or DuckDB with external access off).
        """

    def close(self) -> None:  # noqa: B027 - optional
        """Release what the source holds."""

    def __deepcopy__(self, memo: dict[int, Any]) -> TableSource:
        return self  # a handle: copies of a table share it


_INT = re.compile(r"^(U?(TINY|SMALL|BIG|HUGE)?INT(EGER|[248])?|(SMALL|BIG)?SERIAL[248]?)\b")
_FLOAT = re.compile(r"^(FLOAT[48]?|DOUBLE( PRECISION)?|REAL|NUMERIC|DECIMAL)\b")


def kind_of_sql_type(type_name: str) -> ColumnKind:
    """The column kind of a PostgreSQL, SQLite or DuckDB type name (``text`` if unknown)."""
    upper = type_name.upper()
    if upper.startswith("BOOL"):
        return "bool"
    if "[]" in upper:
        return "text"
    if _INT.match(upper):
        return "int"
    if _FLOAT.match(upper):
        return "float"
    if upper.startswith(("DATE", "TIMESTAMP")):
        return "datetime"
    return "text"
