"""Cell database (Chen et al., TableRAG): distinct (column, value) pairs under a budget ``B``.

Which columns go in:

- text columns: every distinct value up to ``max_value_chars`` characters
  (default 100); longer values are free text, not keywords, and are left out;
- numeric, boolean and datetime columns are described by min/max in the
  schema database and left out, unless they have at most
  ``categorical_limit`` (default 20) distinct values: then they act like
  categories (years of a season table, ratings, flags) and go in. With
  ``include_numeric=True`` they always go in.

How the budget is shared (``allocation="fair"``, the default): water-filling.
Each column may take an equal share of ``B``; a column with fewer distinct
values than its share keeps them all and its unused share is split among the
others, until the shares settle. Integer remainders go to the columns whose
next most frequent value has the highest count. Within a column the most
frequent values are kept (ties: first appearance). The result has exactly
``min(B, distinct pairs)`` entries, and a column with 100k unique IDs cannot
crowd out the categorical columns. ``allocation="global"`` instead keeps the
``B`` most frequent pairs over the whole table (the original TableRAG rule).

Everything is one ``value_counts`` per column, so a 1M-cell table takes well
under a second.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from tablerag_agents.tables.source import ColumnProfile
from tablerag_agents.tables.values import column_kind, format_value

logger = logging.getLogger(__name__)

Allocation = Literal["fair", "global"]
DEFAULT_BUDGET = 10_000


@dataclass(frozen=True)
class CellEntry:
    """One distinct value of one column.

    Attributes:
        column: Column name.
        value: The value as text (as it prints; compare with ``str(cell)``).
        count: How many rows hold it.
    """

    column: str
    value: str
    count: int

    def to_text(self) -> str:
        """Text embedded for cell retrieval."""
        return f"{self.column}: {self.value}"


@dataclass
class CellDatabase:
    """The kept cell entries plus how the budget was spent.

    Attributes:
        entries: Kept entries, column by column, most frequent first.
        budget: The budget ``B``.
        n_distinct: Distinct eligible pairs before truncation.
        allocation: Entries kept per column.
        skipped: Columns left out, with the reason.
    """

    entries: list[CellEntry]
    budget: int
    n_distinct: int
    allocation: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def truncated(self) -> bool:
        """Whether the budget cut some pairs."""
        return self.n_distinct > len(self.entries)


def _check_budget(budget: int, allocation: str) -> None:
    """Refuse a negative cell budget or an unknown allocation."""
    if budget < 0:
        raise ValueError(f"budget must be >= 0, got {budget}")
    if allocation not in ("fair", "global"):
        raise ValueError(f"unknown allocation {allocation!r}; use 'fair' or 'global'")


def _stable_desc(counts: np.ndarray) -> np.ndarray:
    return np.argsort(-counts, kind="stable")


def fair_allocation(
    sizes: Mapping[str, int], budget: int, next_counts: Mapping[str, Sequence[int]] | None = None
) -> dict[str, int]:
    """Split ``budget`` over columns by water-filling (see the module docstring).

    Args:
        sizes: Distinct values available per column.
        budget: Total entries allowed.
        next_counts: Per column, the value counts sorted descending; used to
            give integer remainders to the columns with the most frequent
            leftover values (default: table order).

    Returns:
        Entries per column; they sum to ``min(budget, sum(sizes))``.
    """
    if budget < 0:
        raise ValueError(f"budget must be >= 0, got {budget}")
    alloc = {c: 0 for c in sizes}
    remaining = budget
    open_cols = sorted((c for c in sizes if sizes[c] > 0), key=lambda c: sizes[c])
    while open_cols and remaining > 0:
        share = remaining // len(open_cols)
        smallest = open_cols[0]
        if sizes[smallest] <= share:
            alloc[smallest] = sizes[smallest]
            remaining -= sizes[smallest]
            open_cols.pop(0)
            continue
        for c in open_cols:
            alloc[c] = share
        extra = remaining - share * len(open_cols)
        position = {c: i for i, c in enumerate(sizes)}
        nxt = {c: _count_at(next_counts, c, share) for c in open_cols}
        ranked = sorted(open_cols, key=lambda c: (-nxt[c], position[c]))
        for c in ranked[:extra]:
            alloc[c] += 1
        break
    return alloc


def _count_at(counts: Mapping[str, Sequence[int]] | None, column: str, i: int) -> int:
    values = counts.get(column) if counts else None
    return int(values[i]) if values is not None and i < len(values) else 0


def _column_counts(
    series: pd.Series, *, max_value_chars: int, categorical_limit: int, include_numeric: bool
) -> tuple[pd.Series | None, str]:
    """Value counts of an eligible column (descending, stable), or ``None`` and why not."""
    kind = column_kind(series)
    counts = series.value_counts(dropna=True, sort=False)
    if kind != "text":
        if not include_numeric and len(counts) > categorical_limit:
            return None, f"{kind} column with {len(counts)} distinct values (schema has min/max)"
    else:
        text = pd.Series(counts.index.astype(str), dtype=object)
        lengths = text.str.len().to_numpy()
        keep = (lengths <= max_value_chars) & (text.str.strip().str.len().to_numpy() > 0)
        counts = counts[keep]
        if not len(counts):
            return None, f"free text (all values longer than {max_value_chars} chars or blank)"
    order = _stable_desc(counts.to_numpy())
    return counts.iloc[order], ""


def build_cell_db(
    df: pd.DataFrame,
    *,
    budget: int = DEFAULT_BUDGET,
    allocation: Allocation = "fair",
    max_value_chars: int = 100,
    categorical_limit: int = 20,
    include_numeric: bool = False,
) -> CellDatabase:
    """Extract distinct (column, value) pairs and keep at most ``budget`` of them.

    Args:
        df: The table.
        budget: ``B``, the most entries kept.
        allocation: ``"fair"`` (per-column water-filling) or ``"global"``.
        max_value_chars: Longer text values are left out.
        categorical_limit: Non-text columns with at most this many distinct
            values are indexed like categories.
        include_numeric: Index numeric/bool/datetime columns regardless.

    Raises:
        ValueError: For a negative budget or an unknown allocation.
    """
    _check_budget(budget, allocation)
    per_col: dict[str, pd.Series] = {}
    skipped: dict[str, str] = {}
    for i in range(df.shape[1]):
        name = str(df.columns[i])
        counts, reason = _column_counts(
            df.iloc[:, i],
            max_value_chars=max_value_chars,
            categorical_limit=categorical_limit,
            include_numeric=include_numeric,
        )
        if counts is None:
            skipped[name] = reason
        else:
            per_col[name] = counts
    sizes = {c: len(v) for c, v in per_col.items()}
    n_distinct = sum(sizes.values())
    if allocation == "fair":
        alloc = fair_allocation(sizes, budget, {c: v.to_numpy() for c, v in per_col.items()})
    else:
        alloc = _global_allocation(per_col, budget)
    entries = [
        CellEntry(column=c, value=format_value(v), count=int(n))
        for c, counts in per_col.items()
        for v, n in counts.iloc[: alloc[c]].items()
    ]
    db = CellDatabase(entries, budget, n_distinct, alloc, skipped)
    logger.debug("cell db: %d of %d distinct pairs kept (B=%d)", len(entries), n_distinct, budget)
    return db


def cell_db_from_profiles(
    profiles: Sequence[ColumnProfile],
    *,
    budget: int = DEFAULT_BUDGET,
    allocation: Allocation = "fair",
) -> CellDatabase:
    """The cell database of a table profiled where it lives (same rules as :func:`build_cell_db`).

    Each profile brings its column's most frequent eligible values (at most the
    budget) and how many there are; the budget is shared exactly as for a
    DataFrame. A column ranked over a prefix of its rows offers only the values
    it brought.
    """
    _check_budget(budget, allocation)
    per_col: dict[str, pd.Series] = {}
    skipped: dict[str, str] = {}
    sizes: dict[str, int] = {}
    n_distinct = 0
    for p in profiles:
        if p.cells is None:
            skipped[p.name] = p.skipped
            continue
        counts = pd.Series([n for _, n in p.cells], index=[v for v, _ in p.cells], dtype="int64")
        per_col[p.name] = counts
        sizes[p.name] = len(counts) if p.approximate else max(p.n_cells, len(counts))
        n_distinct += max(p.n_cells, len(counts))
    if allocation == "fair":
        alloc = fair_allocation(sizes, budget, {c: v.to_numpy() for c, v in per_col.items()})
        alloc = {c: min(n, len(per_col[c])) for c, n in alloc.items()}
    else:
        alloc = _global_allocation(per_col, budget)
    entries = [
        CellEntry(column=c, value=str(v), count=int(n))
        for c, counts in per_col.items()
        for v, n in counts.iloc[: alloc[c]].items()
    ]
    return CellDatabase(entries, budget, n_distinct, alloc, skipped)


def _global_allocation(per_col: Mapping[str, pd.Series], budget: int) -> dict[str, int]:
    """Keep the ``budget`` most frequent pairs table-wide (ties: column order)."""
    names = list(per_col)
    if not names:
        return {}
    counts = np.concatenate([per_col[c].to_numpy() for c in names])
    owner = np.concatenate([np.full(len(per_col[c]), i) for i, c in enumerate(names)])
    kept = owner[_stable_desc(counts)[:budget]]
    tally = np.bincount(kept, minlength=len(names))
    return {c: int(tally[i]) for i, c in enumerate(names)}
