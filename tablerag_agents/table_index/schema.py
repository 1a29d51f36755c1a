"""Schema database entries (Chen et al., TableRAG): one record per column.

Each :class:`SchemaEntry` holds the column name, its kind, distinct and
missing counts, a few of its most frequent values and, for numeric and
datetime columns, the min and max. Numeric columns are described here rather
than in the cell database (see :mod:`tablerag_agents.table_index.cells`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from tablerag_agents.tables.source import ColumnProfile
from tablerag_agents.tables.values import column_kind, format_value

_RANGE_KINDS = {"int", "float", "datetime"}


@dataclass(frozen=True)
class SchemaEntry:
    """One column of the schema database.

    Attributes:
        column: Column name.
        dtype: ``int``, ``float``, ``bool``, ``datetime`` or ``text``.
        n_unique: Distinct non-missing values.
        n_missing: Missing cells.
        examples: Most frequent values (capped count and length).
        min: Smallest value (numeric/datetime columns only).
        max: Largest value (numeric/datetime columns only).
    """

    column: str
    dtype: str
    n_unique: int
    n_missing: int = 0
    examples: tuple[str, ...] = field(default_factory=tuple)
    min: str | None = None
    max: str | None = None

    def to_text(self) -> str:
        """Text embedded for schema retrieval: name, type and examples."""
        text = f"{self.column} ({self.dtype}): {', '.join(self.examples)}"
        if self.min is not None:
            text += f"; range {self.min} to {self.max}"
        return text

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable fields (``None`` ranges left out)."""
        data = asdict(self)
        data["examples"] = list(self.examples)
        return {k: v for k, v in data.items() if v is not None}


def schema_entry(
    series: pd.Series, name: str, *, max_examples: int = 3, max_value_chars: int = 50
) -> SchemaEntry:
    """Describe one column (vectorised: one ``value_counts`` plus min/max)."""
    kind = column_kind(series)
    counts = series.value_counts(dropna=True)
    lo = hi = None
    if kind in _RANGE_KINDS and len(counts):
        lo = format_value(series.min(), max_value_chars)
        hi = format_value(series.max(), max_value_chars)
    return SchemaEntry(
        column=name,
        dtype=kind,
        n_unique=int(len(counts)),
        n_missing=int(series.isna().sum()),
        examples=tuple(format_value(v, max_value_chars) for v in counts.index[:max_examples]),
        min=lo,
        max=hi,
    )


def build_schema(
    df: pd.DataFrame, *, max_examples: int = 3, max_value_chars: int = 50
) -> list[SchemaEntry]:
    """Return one :class:`SchemaEntry` per column, in table order."""
    return [
        schema_entry(
            df.iloc[:, i],
            str(df.columns[i]),
            max_examples=max_examples,
            max_value_chars=max_value_chars,
        )
        for i in range(df.shape[1])
    ]


def schema_from_profiles(profiles: list[ColumnProfile]) -> list[SchemaEntry]:
    """One :class:`SchemaEntry` per column of a table profiled where it lives."""
    return [
        SchemaEntry(
            column=p.name,
            dtype=p.kind,
            n_unique=p.n_unique,
            n_missing=p.n_missing,
            examples=p.examples,
            min=p.min,
            max=p.max,
        )
        for p in profiles
    ]
