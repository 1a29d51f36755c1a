"""A worked SQL example written over the table being asked about.

Small models copy the example of their prompt: a fixed example about
``"City"`` and ``"Visitors"`` comes back as ``ORDER BY "Visitors"`` on a table
of albums. :func:`sql_example` writes the example over the real table instead:
its name-like column, a numeric column (a parsed companion when there is one)
or one of its real values, so whatever is copied exists. Deterministic: the
same table always gives the same example.
"""

from __future__ import annotations

import pandas as pd

from tablerag_agents.tables.sql_safety import quote_ident, quote_literal

_MIN_SHARE = 0.8
"""Share of a column's non-empty cells that must be text (name column) or numbers."""
_NAME_SHARE = 0.5
"""Distinct values per row a column needs to be taken as the table's names."""
_HIDDEN = frozenset({"row_no", "is_summary"})


def _text_share(cells: pd.Series) -> float:
    values = cells.dropna().astype(str).str.strip()
    values = values[values != ""]
    if values.empty:
        return 0.0
    numeric = pd.to_numeric(values.str.replace(",", "", regex=False), errors="coerce")
    return float(numeric.isna().mean())


def _label(column: str) -> str:
    """How a question would name ``column`` (companion suffixes dropped)."""
    base = column.split("__", 1)[0] if "__" in column else column
    return " ".join(base.split()).lower()


def sql_example(frame: pd.DataFrame, table: str = "t") -> tuple[str, str] | None:
    """``(question, query)`` over ``frame`` (named ``table`` in SQL), or None if it has
    no text column to ask about."""
    columns = [str(c) for c in frame.columns if str(c) not in _HIDDEN]
    parsed = {c.split("__", 1)[0] for c in columns if "__" in c}
    texts = [
        c
        for c in columns
        if "__" not in c
        and c not in parsed
        and not pd.api.types.is_numeric_dtype(frame[c])
        and _text_share(frame[c]) >= _MIN_SHARE
    ]
    if not texts:
        return None
    # The name column: the first text column whose values mostly differ (entities
    # come first in most tables), else the one with the most distinct values.
    varied = [c for c in texts if frame[c].nunique() >= _NAME_SHARE * len(frame)]
    name = (
        varied[0] if varied else max(texts, key=lambda c: (frame[c].nunique(), -columns.index(c)))
    )
    numbers = [
        c
        for c in columns
        if c.split("__", 1)[0] != name
        and pd.api.types.is_numeric_dtype(frame[c])
        and frame[c].notna().any()
    ]
    # A parsed companion is what to sort on when its column is text.
    numbers.sort(key=lambda c: "__" not in c)
    if numbers:
        number = numbers[0]
        question = f"which {_label(name)} has the highest {_label(number)}?"
        query = (
            f"SELECT {quote_ident(name)} FROM {table} ORDER BY {quote_ident(number)} DESC LIMIT 1"
        )
        return question, query
    others = [c for c in texts if c != name] or [name]
    column = min(others, key=lambda c: (frame[c].nunique(), columns.index(c)))
    counts = frame[column].dropna().astype(str).str.strip().value_counts()
    if counts.empty:
        return None
    value = str(counts.index[0])
    question = f"how many rows have {_label(column)} {value}?"
    query = f"SELECT COUNT(*) FROM {table} WHERE {quote_ident(column)} = {quote_literal(value)}"
    return question, query


def example_block(frame: pd.DataFrame, table: str = "t") -> str | None:
    """The prompt's "Example" section over ``frame``, or None."""
    example = sql_example(frame, table)
    if example is None:
        return None
    question, query = example
    return f"Example\nQuestion: {question}\n```sql\n{query}\n```"
