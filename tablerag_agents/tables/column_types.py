"""Give each column a type and the parsed values its cells stand for.

Types: ``integer``, ``decimal``, ``percentage``, ``money``, ``duration``, ``date``,
``year``, ``text`` and ``list``. A column takes a parsed type when at least
:data:`MIN_SHARE` of its non-missing cells parse as that type (missing markers
such as ``""``, ``"—"``, ``"n/a"`` do not count); the cells that do not parse
get no value (NaN), and their text stays as it was. The decisions:

- numbers: footnote marks, approximation words and a trailing bracketed note
  are ignored (``"1,234 (est.)[1]"`` -> 1234); thousands separators, ordinals
  (``"2nd"`` -> 2) and one unit word (``"16 years"``) are allowed. A column
  keeps one unit: cells written with another unit (``km`` beside ``mi``) get no
  value. Whole numbers are ``integer``, others ``decimal``.
- ``percentage``: the number as written (``"45%"`` -> 45, not 0.45), so it
  reads like the table and like answers written as "45%".
- ``money``: scaled to units (``"$1.2 million"`` -> 1200000); one currency per
  column (cells in another currency get no value).
- ``duration``: seconds (``"3:05.2"`` -> 185.2, ``"1:34:45.026"``, ``"3m 37s"``).
- ``date``: a date (``"12 June 1998"``, ``"June 12, 1998"``, ``"12/06/1998"``);
  ``a/b/yyyy`` is read day first unless a cell of the column only makes sense
  month first (``"11/21/2012"``); ``"June 1998"`` is the 1st of June.
- ``year``: whole numbers within 1000-2100 written without separators, and
  eras (``"4000 BC"`` -> -4000). A year column holding spans (``"1986–1990"``,
  ``"1999-00"``, ``"2012–present"``) gets the first and the last year of each
  span (a single year is both; an open end has no last year).
- ``list``: several items in a cell (``", "``, ``";"``, ``" / "`` or one per
  line) in at least 30% of the cells, with varying counts (``"City, Country"``
  in most cells is text, not a list). Lists get no parsed values.
- A number followed by another in brackets reads as the first
  (``"17.3 (63.1)"`` -> 17.3, the brackets holding a conversion or a note); the
  original text stays beside it.
- Numeric and date columns that pandas already typed keep their values.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

import numpy as np
import pandas as pd

from tablerag_agents.tables.cell_parsing import (
    MAX_YEAR,
    MIN_YEAR,
    Quantity,
    core_text,
    is_missing_text,
    parse_date,
    parse_duration,
    parse_quantity,
    parse_year,
    parse_year_range,
    split_items,
)

ColumnType = Literal[
    "integer", "decimal", "percentage", "money", "duration", "date", "year", "text", "list"
]
MIN_SHARE = 0.8
"""Share of a column's non-missing cells that must parse for it to take a type."""
_MIN_LIST_SHARE = 0.3
_MAX_LIST_ITEM_CHARS = 30
_SAME_COUNT_SHARE = 0.7
_DATE_HINT = re.compile(r"[/.-]\d|\d[/.-]|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec", re.I)
_DURATION_HINT = re.compile(r":\d|\d\s*(?:h|m|s)", re.I)
_PERCENT_HEADER = re.compile(r"%|percent", re.I)
_MAY_LIST = re.compile(r"[,;\n]| / ")


@dataclass
class ColumnProfile:
    """The type of one column and its parsed values.

    Attributes:
        name: The column.
        type: Its type.
        values: The parsed value of each row (same index as the column; NaN/NaT
            where a cell did not parse), or None for text and lists. For year
            spans, the first year.
        end: For year spans, the last year of each row (NaN: open or unparsed).
        unit: The unit word or currency sign the column is written in (``"km"``,
            ``"$"``), or ``""``.
        share: Share of the non-missing cells that parsed.
        differs: The values were parsed from text (``"1,234"``, ``"3:05"``, or
            ``"1961"`` in a column that also holds ``"Totals"``), so a companion
            column of values says more than the original; False for columns
            pandas already holds as numbers or dates.
        separator: How list items are separated (list columns).
        notes: Decisions worth telling a reader (``"month-only dates are the 1st"``).
    """

    name: str
    type: ColumnType
    values: pd.Series | None = None
    end: pd.Series | None = None
    unit: str = ""
    share: float = 0.0
    differs: bool = False
    separator: str = ""
    notes: tuple[str, ...] = ()

    @property
    def is_span(self) -> bool:
        """True for a year column holding spans (``"1986–1990"``)."""
        return self.end is not None


def _unit_key(unit: str) -> str:
    key = unit.lower().rstrip(".")
    return key[:-1] if len(key) > 3 and key.endswith("s") else key


def _already_typed(series: pd.Series, name: str) -> ColumnProfile | None:
    """The profile of a column pandas already holds as numbers or datetimes."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return ColumnProfile(name, "text")
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return ColumnProfile(name, "date", values=series, share=1.0)
    if not pd.api.types.is_numeric_dtype(dtype):
        return None
    values = series.astype(float)
    known = values.dropna()
    whole = bool((known == known.round()).all())
    years = whole and len(known) > 0 and bool(known.between(MIN_YEAR, MAX_YEAR).all())
    kind: ColumnType = "year" if years else "integer" if whole else "decimal"
    if _PERCENT_HEADER.search(name) and not years:
        kind = "percentage"
    return ColumnProfile(name, kind, values=values, share=1.0)


@dataclass
class _Cells:
    """The distinct cell texts of a column, their counts and core texts."""

    codes: np.ndarray
    texts: list[str]
    cores: list[str]
    counts: np.ndarray
    present: np.ndarray
    """Per distinct text: not a missing marker."""

    @property
    def total(self) -> int:
        return int(self.counts[self.present].sum())

    def share(self, ok: np.ndarray) -> float:
        """Share of non-missing cells whose distinct text satisfies ``ok``."""
        total = self.total
        return float(self.counts[ok & self.present].sum()) / total if total else 0.0

    def spread(self, values: list[Any], dtype: Any = float) -> pd.Series:
        """Per-row values from per-distinct-text ``values`` (None/NaN where none)."""
        arr = np.array([np.nan if v is None else v for v in values] + [np.nan], dtype=dtype)
        return pd.Series(arr[self.codes])


def _cells(series: pd.Series, skip: np.ndarray | None) -> _Cells:
    # A dict is faster than pandas' factorize on the small columns tables mostly have.
    index: dict[str, int] = {}
    codes = np.empty(len(series), dtype=np.intp)
    for pos, value in enumerate(series.tolist()):
        if value is None or value is pd.NA or value != value:
            codes[pos] = -1
            continue
        text = value if isinstance(value, str) else str(value)
        codes[pos] = index.setdefault(text, len(index))
    texts = list(index)
    cores = [core_text(t) for t in texts]
    counted = codes >= 0 if skip is None else (codes >= 0) & ~skip
    counts = np.bincount(codes[counted], minlength=len(texts))
    present = np.array([not is_missing_text(c) for c in cores], dtype=bool)
    codes[codes < 0] = len(texts)  # the last slot of `spread` is NaN
    return _Cells(codes, texts, cores, counts, present)


def _apply(cells: _Cells, parse: Callable[[str], Any], hint: re.Pattern[str] | None) -> list[Any]:
    return [
        parse(core) if ok and (hint is None or hint.search(core)) else None
        for core, ok in zip(cells.cores, cells.present, strict=True)
    ]


def _majority(counts: Counter[str], total: int) -> str:
    """The most common key if it covers at least half of ``total``, else ``""``."""
    if not counts:
        return ""
    key, n = counts.most_common(1)[0]
    return key if n * 2 >= total else ""


def _quantity_profile(name: str, cells: _Cells, parsed: list[Quantity | None]) -> ColumnProfile:
    """Decide the numeric flavour (money, percentage, year, integer, decimal) and unit."""
    got = [(i, q) for i, q in enumerate(parsed) if q is not None]
    weights = {i: int(cells.counts[i]) for i, _ in got}
    currency = Counter[str]()
    units = Counter[str]()
    percent = 0
    for i, q in got:
        if q.currency:
            currency[q.currency] += weights[i]
        if q.unit:
            units[_unit_key(q.unit)] += weights[i]
        percent += weights[i] * q.percent
    n = sum(weights.values())
    money = _majority(currency, n)
    unit = _majority(units, n)
    kept: list[float | None] = [None] * len(parsed)
    for i, q in got:
        if (q.currency and q.currency != money) or (q.unit and _unit_key(q.unit) != unit):
            continue  # another currency or unit: not comparable with the rest
        kept[i] = q.value
    ok = np.array([v is not None for v in kept], dtype=bool)
    values = [v for v in kept if v is not None]
    whole = all(float(v).is_integer() for v in values)
    plain = not any(q.currency or q.percent or q.unit or q.separated or q.ordinal for _, q in got)
    in_years = sum(
        weights[i] for i, q in got if kept[i] is not None and MIN_YEAR <= q.value <= MAX_YEAR
    )
    kind: ColumnType
    if money:
        kind = "money"
    elif percent * 2 >= n or (_PERCENT_HEADER.search(name) and not unit):
        kind = "percentage"
    elif whole and plain and in_years >= 0.9 * sum(weights[i] for i in weights if ok[i]):
        kind = "year"
    else:
        kind = "integer" if whole else "decimal"
    return ColumnProfile(
        name,
        kind,
        values=cells.spread(kept),
        unit=money or unit,
        share=cells.share(ok),
        differs=True,
    )


def _date_profile(name: str, cells: _Cells) -> ColumnProfile:
    """Parse dates, deciding day-first or month-first for ``a/b/yyyy`` from the column."""
    numeric = [re.match(r"^(\d{1,2})[/.](\d{1,2})[/.]\d{4}", c) for c in cells.cores]
    month_first = any(m and int(m[1]) <= 12 < int(m[2]) for m in numeric)
    parsed = _apply(cells, lambda c: parse_date(c, day_first=not month_first), _DATE_HINT)
    dates: list[date | None] = [p.value if p else None for p in parsed]
    ok = np.array([d is not None for d in dates], dtype=bool)
    days = np.array([np.datetime64(d, "D") if d else np.datetime64("NaT") for d in dates])
    days = np.append(days.astype("datetime64[D]"), np.datetime64("NaT"))
    notes = []
    if any(p and p.month_only for p in parsed):
        notes.append("dates with only a month and year are the 1st of the month")
    if any(p and p.ambiguous for p in parsed):
        notes.append("a/b/yyyy dates read " + ("month first" if month_first else "day first"))
    return ColumnProfile(
        name,
        "date",
        values=pd.Series(days[cells.codes].astype("datetime64[s]")),
        share=cells.share(ok),
        differs=True,
        notes=tuple(notes),
    )


def _span_profile(name: str, cells: _Cells) -> ColumnProfile | None:
    """Year spans (``"1986–1990"``) with single years allowed; None if no cell is a span."""
    spans: list[tuple[int, int | None] | None] = []
    ranged = 0
    for core, ok in zip(cells.cores, cells.present, strict=True):
        span = parse_year_range(core) if ok else None
        if span is None and ok and (year := parse_year(core)) is not None:
            span = (year, year) if MIN_YEAR <= year <= MAX_YEAR else None
        elif span is not None:
            ranged += 1
        spans.append(span)
    if not ranged:
        return None
    ok = np.array([s is not None for s in spans], dtype=bool)
    return ColumnProfile(
        name,
        "year",
        values=cells.spread([s[0] if s else None for s in spans]),
        end=cells.spread([s[1] if s else None for s in spans]),
        share=cells.share(ok),
        differs=True,
    )


def _list_profile(name: str, cells: _Cells) -> ColumnProfile | None:
    """A list column: several items in enough cells, with counts that vary."""
    counts = []
    lengths: list[int] = []
    separators = Counter[str]()
    for text, ok, n in zip(cells.texts, cells.present, cells.counts, strict=True):
        if not ok:
            continue
        items = split_items(text) if _MAY_LIST.search(text) else [text]
        counts.append((len(items), int(n)))
        lengths.extend(len(i) for i in items)
        if len(items) > 1:
            for sep in (";", "\n", " / ", ", "):
                if sep in text:
                    separators[sep] += int(n)
                    break
    total = sum(n for _, n in counts)
    multi = Counter[int]()
    for k, n in counts:
        if k > 1:
            multi[k] += n
    n_multi = sum(multi.values())
    if not total or n_multi < _MIN_LIST_SHARE * total or not lengths:
        return None
    # "City, Country" in most cells is one value in two parts, not a list.
    if multi.most_common(1)[0][1] >= _SAME_COUNT_SHARE * n_multi:
        return None
    if np.mean(lengths) > _MAX_LIST_ITEM_CHARS:
        return None
    sep = separators.most_common(1)[0][0]
    return ColumnProfile(name, "list", share=n_multi / total, separator=sep)


def profile_column(
    series: pd.Series, name: str | None = None, *, skip: np.ndarray | None = None
) -> ColumnProfile:
    """Type one column and parse its values.

    Args:
        series: The column (any dtype).
        name: Its name (defaults to ``series.name``); a ``%`` or "percent" in it
            makes a numeric column a percentage.
        skip: Rows left out of the type decision (summary rows such as "Total",
            whose label would count against a number column); their values are
            parsed all the same.
    """
    name = str(series.name if name is None else name)
    series = series.reset_index(drop=True)
    skip = None if skip is None else np.asarray(skip, dtype=bool)
    typed = _already_typed(series, name)
    if typed is not None:
        return typed
    cells = _cells(series, skip)
    if cells.total == 0:
        return ColumnProfile(name, "text")
    digits = np.array([bool(re.search(r"\d", c)) for c in cells.cores], dtype=bool)
    candidates: list[ColumnProfile] = []
    if cells.share(digits) >= MIN_SHARE:
        if cells.share(np.array([bool(_DURATION_HINT.search(c)) for c in cells.cores])) > 0:
            durations = _apply(cells, parse_duration, _DURATION_HINT)
            ok = np.array([d is not None for d in durations], dtype=bool)
            candidates.append(
                ColumnProfile(
                    name,
                    "duration",
                    values=cells.spread(durations),
                    share=cells.share(ok),
                    differs=True,
                    unit="seconds",
                )
            )
        if cells.share(np.array([bool(_DATE_HINT.search(c)) for c in cells.cores])) > 0:
            candidates.append(_date_profile(name, cells))
        span = _span_profile(name, cells)
        if span is not None:
            candidates.append(span)
        candidates.append(_quantity_profile(name, cells, _apply(cells, parse_quantity, None)))
    best = max(candidates, key=lambda p: p.share, default=None)  # ties: the earlier
    if best is not None and best.share >= MIN_SHARE:
        return best
    return _list_profile(name, cells) or ColumnProfile(name, "text")


def profile_columns(
    df: pd.DataFrame, *, skip: np.ndarray | None = None
) -> dict[str, ColumnProfile]:
    """Type every column of ``df`` (see :func:`profile_column`), keyed by column name."""
    return {str(c): profile_column(col, str(c), skip=skip) for c, col in df.items()}
