"""Column profiles from aggregate queries pushed down to where a table lives.

The same rules as the in-memory schema and cell databases
(:mod:`tablerag_agents.table_index`), as SQL: one scan counts rows, non-missing
and distinct values (and eligible text values) and takes min/max of every
column; then, per column, a ``GROUP BY value ORDER BY count DESC LIMIT k``
keeps the most frequent values (Chen et al.'s frequency truncation). Only
aggregates and at most ``budget`` values per column come back, whatever the
table's size. A column whose values are all distinct takes its first values
instead of a GROUP BY (every count is 1); a column with more than
``max_exact_distinct`` distinct values is ranked over its first
``prefix_rows`` rows, so no hash table grows with the table.
"""

from __future__ import annotations

from typing import Any

from tablerag_agents.tables.source import ColumnProfile, ProfileRequest, kind_of_sql_type
from tablerag_agents.tables.source_backends import Backend
from tablerag_agents.tables.sql_safety import quote_ident
from tablerag_agents.tables.values import format_value

_RANGE_KINDS = ("int", "float", "datetime")


class Profiler:
    """Profile every column of one backend's table.

    Args:
        backend: The open table.
        request: What the schema and cell databases need.
        timeout_s: Time for each query.
        approximate: Count distinct values approximately (big files).
        max_exact_distinct: Rank columns with more distinct values over a prefix.
        prefix_rows: Rows of that prefix.
    """

    def __init__(
        self,
        backend: Backend,
        request: ProfileRequest,
        *,
        timeout_s: float,
        approximate: bool,
        max_exact_distinct: int,
        prefix_rows: int,
    ) -> None:
        """Store the settings."""
        self.b = backend
        self.req = request
        self.timeout_s = timeout_s
        self.approximate = approximate
        self.max_exact_distinct = max_exact_distinct
        self.prefix_rows = prefix_rows

    def _expr(self, name: str, kind: str) -> str:
        """The column as profiled: text columns as the backend's text."""
        col = quote_ident(name)
        return self.b.as_text(col) if kind == "text" else col

    def _eligible(self, expr: str) -> str:
        """SQL condition: a text value short and non-blank enough for the cell database."""
        return (
            f"{expr} IS NOT NULL AND length({expr}) <= {self.req.max_value_chars} "
            f"AND trim({expr}) <> ''"
        )

    def run(self) -> tuple[int, list[ColumnProfile]]:
        """The row count and one profile per column."""
        described = self.b.columns()
        kinds = [kind_of_sql_type(t) for _, t in described]
        exprs = ["count(*)"]
        for (name, _), kind in zip(described, kinds, strict=True):
            col = self._expr(name, kind)
            exprs += [f"count({col})", self.b.count_distinct(col, self.approximate)]
            if kind in _RANGE_KINDS:
                exprs += [f"min({col})", f"max({col})"]
            if kind == "text":
                exprs.append(
                    self.b.count_distinct(
                        f"CASE WHEN {self._eligible(col)} THEN {col} END", self.approximate
                    )
                )
        (stats,) = self.b.fetch(f"SELECT {', '.join(exprs)} FROM {self.b.ref}", self.timeout_s)
        n_rows = int(stats[0])
        values = iter(stats[1:])
        profiles = []
        for (name, _), kind in zip(described, kinds, strict=True):
            non_null, distinct = int(next(values)), int(next(values) or 0)
            lo = hi = None
            if kind in _RANGE_KINDS:
                lo, hi = next(values), next(values)
            eligible = int(next(values) or 0) if kind == "text" else distinct
            profiles.append(self._column(name, kind, n_rows, non_null, distinct, eligible, lo, hi))
        return n_rows, profiles

    def _top(self, col: str, where: str, k: int, unique: bool, big: bool) -> list[tuple[Any, int]]:
        """The ``k`` most frequent values meeting ``where`` (ties: smallest value first)."""
        if k <= 0:
            return []
        if unique:  # every count is 1: the first values, as pandas' stable ranking gives
            sql = f"SELECT {col} FROM {self.b.ref} WHERE {where} LIMIT {k}"
            rows = self.b.fetch(sql, self.timeout_s, k)
            return [(r[0], 1) for r in rows]
        source = self.b.ref
        if big:
            source = f"(SELECT * FROM {self.b.ref} LIMIT {self.prefix_rows}) AS _prefix"
        sql = (
            f"SELECT {col} AS _v, count(*) AS _n FROM {source} WHERE {where} "
            f"GROUP BY _v ORDER BY _n DESC, _v LIMIT {k}"
        )
        return [(r[0], int(r[1])) for r in self.b.fetch(sql, self.timeout_s)]

    def _column(
        self,
        name: str,
        kind: Any,
        n_rows: int,
        non_null: int,
        distinct: int,
        eligible: int,
        lo: Any,
        hi: Any,
    ) -> ColumnProfile:
        req = self.req
        col = self._expr(name, kind)
        big = distinct > self.max_exact_distinct
        unique = not self.approximate and distinct == non_null
        top = self._top(col, f"{col} IS NOT NULL", req.max_examples, unique, big)
        examples = tuple(format_value(v, req.example_chars) for v, _ in top)
        cells: list[tuple[Any, int]] | None = None
        skipped = ""
        if kind == "text":
            if eligible == 0:
                skipped = f"free text (all values longer than {req.max_value_chars} chars or blank)"
            else:
                k = min(req.budget, eligible)
                cells = self._top(col, self._eligible(col), k, unique, big)
        elif not req.include_numeric and distinct > req.categorical_limit:
            skipped = f"{kind} column with {distinct} distinct values (schema has min/max)"
        else:
            cells = self._top(col, f"{col} IS NOT NULL", min(req.budget, distinct), unique, big)
        has_range = kind in _RANGE_KINDS and non_null > 0
        return ColumnProfile(
            name=name,
            kind=kind,
            n_unique=distinct,
            n_missing=n_rows - non_null,
            examples=examples,
            min=format_value(lo, req.example_chars) if has_range else None,
            max=format_value(hi, req.example_chars) if has_range else None,
            cells=None if cells is None else tuple((format_value(v), n) for v, n in cells),
            n_cells=eligible if kind == "text" else (distinct if cells is not None else 0),
            skipped=skipped,
            approximate=self.approximate or big,
        )
