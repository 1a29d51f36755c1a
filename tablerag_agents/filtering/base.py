"""The result of a table filter (a sub-table by row positions and column names) and helpers."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from langchain_core.messages import BaseMessage
from pydantic import BaseModel, Field, computed_field


class SubTable(BaseModel):
    """Rows and columns of a table that a filter kept, with what the filter cost.

    Attributes:
        rows: 0-based positions in the input DataFrame, ascending.
        columns: Kept column names, in table order.
        method: The filter that made it (``semantic:dense``, ``llm_filter``, ``pieta``...).
        fallback: True when the filter gave up and kept the whole table (see ``reason``).
        reason: Why it fell back (empty otherwise).
        input_tokens: Prompt tokens the filter spent (from the model's ``usage_metadata``).
        output_tokens: Completion tokens the filter spent.
        seconds: Wall-clock time of the filter.
        detail: Method-specific facts (vote counts, rounds, scores...).
    """

    rows: list[int]
    columns: list[str]
    method: str
    fallback: bool = False
    reason: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    detail: dict[str, Any] = Field(default_factory=dict)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def n_cells(self) -> int:
        """Number of cells kept (rows x columns)."""
        return len(self.rows) * len(self.columns)

    def apply(self, df: pd.DataFrame) -> pd.DataFrame:
        """Return ``df.iloc[rows][columns]``, keeping the original index (citable row ids)."""
        wanted = set(self.columns)
        positions = [i for i, c in enumerate(df.columns) if str(c) in wanted]
        return df.iloc[self.rows, positions]

    @classmethod
    def whole(cls, df: pd.DataFrame, method: str, reason: str, **fields: Any) -> SubTable:
        """The whole table, marked as a fallback with ``reason``."""
        return cls(
            rows=list(range(len(df))),
            columns=column_names(df),
            method=method,
            fallback=True,
            reason=reason,
            **fields,
        )

    @classmethod
    def select(
        cls,
        df: pd.DataFrame,
        rows: Iterable[int],
        columns: Iterable[str],
        method: str,
        **fields: Any,
    ) -> SubTable:
        """A sub-table from any positions and names: out-of-range rows and unknown columns drop.

        Rows come back sorted and unique, columns in table order.
        """
        keep_rows = sorted({int(r) for r in rows if 0 <= int(r) < len(df)})
        wanted = set(columns)
        keep_cols = [c for c in column_names(df) if c in wanted]
        return cls(rows=keep_rows, columns=list(dict.fromkeys(keep_cols)), method=method, **fields)


def column_names(df: pd.DataFrame) -> list[str]:
    """The table's column names as strings, in table order."""
    return [str(c) for c in df.columns]


def display_name(name: str) -> str:
    """A column name as shown in prompts: whitespace (line breaks too) squeezed to one space."""
    return " ".join(name.split())


def display_names(columns: Sequence[str]) -> list[str]:
    """Prompt names for ``columns``; the names unchanged if squeezing would make two equal."""
    shown = [display_name(c) for c in columns]
    return shown if len(set(shown)) == len(shown) else list(columns)


def check_table(df: pd.DataFrame) -> None:
    """Raise ValueError when ``df`` has no rows or no columns."""
    if df.shape[0] == 0 or df.shape[1] == 0:
        raise ValueError(f"cannot filter an empty table (shape {df.shape})")


@dataclass
class Meter:
    """Token usage and wall time of one filter run."""

    started: float = field(default_factory=time.perf_counter)
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0

    def add(self, message: BaseMessage | None) -> None:
        """Count one model reply's ``usage_metadata`` (None counts as a failed call)."""
        self.calls += 1
        usage = getattr(message, "usage_metadata", None) or {}
        self.input_tokens += int(usage.get("input_tokens", 0) or 0)
        self.output_tokens += int(usage.get("output_tokens", 0) or 0)

    def add_tokens(self, input_tokens: int, output_tokens: int) -> None:
        """Count tokens already read off a reply."""
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens

    def fields(self) -> dict[str, Any]:
        """The cost fields of a :class:`SubTable`."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "seconds": round(time.perf_counter() - self.started, 4),
        }
