"""Column-name and cell clean-up shared by every table loader.

Rules (applied in this order to each column name):

1. ``None``/NaN, blank names and pandas' ``Unnamed: N`` placeholders become
   ``column_<position>`` (1-based).
2. Control characters (newlines, tabs, NUL...) become spaces; runs of
   whitespace collapse to one space; leading/trailing whitespace is stripped.
3. Names longer than :data:`MAX_COLUMN_NAME_CHARS` are cut.
4. Duplicates get a suffix: ``a``, ``a_2``, ``a_3`` (skipping suffixes already taken).

Hostile names (``"); DROP TABLE x; --``, ``__import__('os')``) are kept as
data: nothing here evaluates them, and downstream code must quote them.
"""

from __future__ import annotations

import json
import logging
import re
import unicodedata
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from tablerag_agents.errors import TableLoadError

logger = logging.getLogger(__name__)

#: Longest column name kept; longer names are cut with a warning.
MAX_COLUMN_NAME_CHARS = 100
#: Default longest cell string kept by the loaders (1 MB of text per cell).
DEFAULT_MAX_CELL_CHARS = 100_000

_UNNAMED = re.compile(r"^Unnamed: \d+(_level_\d+)?$")
_SPACES = re.compile(r"\s+")


class TableLoadWarning(UserWarning):
    """A table was loaded but something had to be repaired (names, rows, encoding)."""


def warn(message: str) -> None:
    """Emit a :class:`TableLoadWarning` (also logged at DEBUG)."""
    logger.debug(message)
    warnings.warn(message, TableLoadWarning, stacklevel=3)


def _strip_controls(text: str) -> str:
    cleaned = "".join(" " if unicodedata.category(ch) == "Cc" else ch for ch in text)
    return _SPACES.sub(" ", cleaned).strip()


def _is_missing(name: object) -> bool:
    if name is None:
        return True
    try:
        return bool(pd.isna(name))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def normalize_column_names(
    names: Sequence[object], *, max_chars: int = MAX_COLUMN_NAME_CHARS
) -> tuple[list[str], list[str]]:
    """Make column names unique, non-empty, single-line strings.

    Args:
        names: Raw column labels (any objects).
        max_chars: Longest name kept.

    Returns:
        The cleaned names and a list of human-readable notes about each repair
        (empty when nothing changed).
    """
    notes: list[str] = []
    cleaned: list[str] = []
    for pos, raw in enumerate(names, start=1):
        text = "" if _is_missing(raw) else str(raw)
        if _UNNAMED.match(text):
            text = ""
        stripped = _strip_controls(text)
        if stripped != text.strip() and stripped:
            notes.append(f"column {pos}: removed control characters/newlines from {text!r}")
        if len(stripped) > max_chars:
            notes.append(f"column {pos}: name of {len(stripped)} chars cut to {max_chars}")
            stripped = stripped[:max_chars].rstrip()
        if not stripped:
            stripped = f"column_{pos}"
            notes.append(f"column {pos}: empty name replaced by {stripped!r}")
        cleaned.append(stripped)
    used = set(cleaned)
    seen: set[str] = set()
    out: list[str] = []
    for name in cleaned:
        if name in seen:
            n = 2
            while f"{name}_{n}" in used:
                n += 1
            new = f"{name}_{n}"
            notes.append(f"duplicate column name {name!r} renamed to {new!r}")
            used.add(new)
            name = new
        seen.add(name)
        out.append(name)
    return out, notes


def _text_columns(df: pd.DataFrame) -> list[tuple[int, bool]]:
    """Positions of columns that may hold text, and whether they hold ONLY text.

    pandas string columns (the default for text in pandas 3) hold only strings
    and missing values, so vectorised ``.str`` methods are safe on them; object
    columns may mix types and are handled value by value.
    """
    out = []
    for i in range(df.shape[1]):
        dtype = df.iloc[:, i].dtype
        if isinstance(dtype, pd.StringDtype):
            out.append((i, True))
        elif pd.api.types.is_object_dtype(dtype):
            out.append((i, False))
    return out


def truncate_long_cells(df: pd.DataFrame, max_chars: int | None) -> list[str]:
    """Cut string cells longer than ``max_chars`` in place.

    Returns:
        Notes naming the columns and how many cells were cut (empty if none).
    """
    if max_chars is None:
        return []
    notes: list[str] = []
    for i, only_text in _text_columns(df):
        series = df.iloc[:, i]
        if only_text:
            lengths = series.str.len().fillna(0)
        else:
            lengths = series.map(lambda v: len(v) if isinstance(v, str) else 0)
        too_long = (lengths > max_chars).to_numpy()
        count = int(too_long.sum())
        if count:
            cut = series.copy()
            cut[too_long] = series[too_long].str.slice(0, max_chars)
            df.isetitem(i, cut)
            notes.append(
                f"column {df.columns[i]!r}: {count} cell(s) longer than {max_chars} chars "
                f"truncated (longest was {int(lengths.max())})"
            )
    return notes


def strip_string_cells(df: pd.DataFrame) -> None:
    """Strip surrounding whitespace from string cells in place (numbers untouched)."""
    for i, only_text in _text_columns(df):
        series = df.iloc[:, i]
        if only_text:
            df.isetitem(i, series.str.strip())
        else:
            df.isetitem(i, series.map(lambda v: v.strip() if isinstance(v, str) else v))


_ISO_DATE = r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?"


def parse_iso_dates(df: pd.DataFrame) -> list[str]:
    """Turn text columns whose every value is an ISO date(-time) into datetimes, in place.

    Only full ``YYYY-MM-DD`` dates (optionally with a time) qualify, so values
    such as ``"2003-05"`` or ``"1931"`` stay text. Returns the converted names.
    """
    converted: list[str] = []
    for i, only_text in _text_columns(df):
        series = df.iloc[:, i]
        values = series.dropna()
        if not only_text:
            if not values.map(lambda v: isinstance(v, str)).all():
                continue
            values = values.astype(str)
        if values.empty or not values.str.fullmatch(_ISO_DATE).all():
            continue
        parsed = pd.to_datetime(series, format="ISO8601", errors="coerce")
        if parsed.notna().sum() == len(values):
            df.isetitem(i, parsed)
            converted.append(str(df.columns[i]))
    return converted


def _nested_to_json(df: pd.DataFrame) -> int:
    """Turn dict/list cells into JSON strings in place; return how many changed."""
    changed = 0
    for col in df.columns:
        series = df[col]
        if not pd.api.types.is_object_dtype(series):
            continue
        nested = series.map(lambda v: isinstance(v, dict | list | tuple | set))
        if nested.any():
            changed += int(nested.sum())
            df.loc[nested, col] = series[nested].map(
                lambda v: json.dumps(list(v) if isinstance(v, set) else v, default=str)
            )
    return changed


def clean_table(
    df: pd.DataFrame,
    source: str | Path,
    *,
    max_cell_chars: int | None = DEFAULT_MAX_CELL_CHARS,
    iso_dates: bool = True,
) -> tuple[pd.DataFrame, list[str]]:
    """Return a cleaned copy of ``df`` (fixed names, stripped/truncated cells) and notes.

    Args:
        df: Raw frame (labels may be anything, duplicated, MultiIndex...).
        source: Named in errors.
        max_cell_chars: Longest string cell kept (``None``: no limit).
        iso_dates: Convert text columns holding only ISO dates to datetimes.

    Returns:
        The frame and a note on each repair.

    Raises:
        TableLoadError: If the table has no columns or no rows.
    """
    if df.shape[1] == 0:
        raise TableLoadError(source, "table has no columns")
    if len(df) == 0:
        raise TableLoadError(source, "table has no rows")
    notes: list[str] = []
    df = df.copy()
    if isinstance(df.index, pd.MultiIndex) or any(n is not None for n in df.index.names):
        df = df.reset_index()
    if isinstance(df.columns, pd.MultiIndex):
        labels: list[object] = [
            " / ".join(str(p) for p in parts if str(p) and not str(p).startswith("Unnamed"))
            for parts in df.columns
        ]
    else:
        labels = list(df.columns)
    names, name_notes = normalize_column_names(labels)
    notes.extend(name_notes)
    df.columns = pd.Index(names, dtype=object)
    df = df.reset_index(drop=True)
    nested = _nested_to_json(df)
    if nested:
        notes.append(f"{nested} nested JSON value(s) stored as JSON strings")
    strip_string_cells(df)
    notes.extend(truncate_long_cells(df, max_cell_chars))
    if iso_dates:
        dated = parse_iso_dates(df)
        if dated:
            logger.debug("%s: parsed ISO dates in %s", source, dated)
    return df, notes


def report_notes(source: str | Path, notes: Sequence[str], *, quiet: bool = False) -> None:
    """Emit each repair note as a :class:`TableLoadWarning` (or log it when ``quiet``)."""
    for note in notes:
        if quiet:
            logger.info("%s: %s", source, note)
        else:
            warn(f"{source}: {note}")
