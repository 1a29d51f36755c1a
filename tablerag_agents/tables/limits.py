"""Limits on loading one table file: the worker's memory and time, the table's shape.

Every table file is read in a bounded worker process
(:mod:`tablerag_agents.bounded`), so a hostile file of a few kilobytes (a
Parquet dictionary bomb, a DuckDB view that never ends, an xlsx zip bomb)
costs at most these limits and the host process never pays for it. Values come
from keyword arguments, then ``TABLERAG_LOAD_*`` environment variables (e.g.
``TABLERAG_LOAD_MEMORY_MB``), then the defaults.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from tablerag_agents.bounded.limits import MIB, WorkerLimits
from tablerag_agents.errors import TableLimitError


class LoadLimits(BaseSettings):
    """What reading one table file may cost, and how big the table may be."""

    model_config = SettingsConfigDict(env_prefix="TABLERAG_LOAD_", extra="ignore", frozen=True)

    memory_mb: int = Field(
        default=2048, ge=64, description="Memory (address space) the worker may add to read it."
    )
    cpu_seconds: float = Field(default=60.0, gt=0, description="CPU time of one load.")
    wall_seconds: float = Field(default=120.0, gt=0, description="Wall-clock time of one load.")
    max_cells: int = Field(default=20_000_000, ge=1, description="Rows x columns of a table.")
    max_columns: int = Field(default=10_000, ge=1, description="Columns of a table.")
    max_result_mb: int = Field(
        default=1024, ge=1, le=4095, description="Size of the loaded table sent back (Arrow)."
    )
    out_of_core_mb: int | None = Field(
        default=512,
        ge=1,
        description="CSV/Parquet files bigger than this stay on disk and are scanned by "
        "DuckDB instead of loaded (None: always load).",
    )

    def worker(self) -> WorkerLimits:
        """The worker limits of one load."""
        return WorkerLimits(
            memory_bytes=self.memory_mb * MIB,
            cpu_seconds=self.cpu_seconds,
            wall_seconds=self.wall_seconds,
        )

    def max_rows(self, n_columns: int) -> int:
        """Most rows a table of ``n_columns`` columns may have."""
        return max(1, self.max_cells // max(1, n_columns))

    def check_columns(self, source: str | Path, n_columns: int) -> None:
        """Raise if a table has too many columns (before reading its rows when possible).

        Raises:
            TableLimitError: Over ``max_columns``.
        """
        if n_columns > self.max_columns:
            raise TableLimitError(
                source, "columns", f"{self.max_columns:,}", f"the table has {n_columns:,} columns"
            )

    def check_shape(
        self, source: str | Path, n_rows: int, n_columns: int, *, cut: bool = False
    ) -> None:
        """Raise if a table has too many columns or cells.

        Args:
            source: Named in the error.
            n_rows: Rows read.
            n_columns: Columns of the table.
            cut: Reading stopped at ``n_rows``: the table has at least that many.

        Raises:
            TableLimitError: Over ``max_columns`` or ``max_cells``.
        """
        self.check_columns(source, n_columns)
        if n_rows * n_columns > self.max_cells:
            raise TableLimitError(
                source,
                "cells",
                f"{self.max_cells:,} (rows x columns)",
                f"the table has {'more than ' if cut else ''}"
                f"{n_rows - int(cut):,} rows x {n_columns:,} columns",
            )
