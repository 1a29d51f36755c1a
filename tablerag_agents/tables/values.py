"""Column kinds and value formatting shared by representations, indexes and prompts."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal

import numpy as np
import pandas as pd

ColumnKind = Literal["int", "float", "bool", "datetime", "text"]

ELLIPSIS = "…"


def column_kind(series: pd.Series) -> ColumnKind:
    """Classify a column by its pandas dtype (strings that look like numbers stay text)."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "bool"
    if pd.api.types.is_integer_dtype(dtype):
        return "int"
    if pd.api.types.is_float_dtype(dtype):
        return "float"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "datetime"
    return "text"


def is_missing(value: Any) -> bool:
    """Whether a scalar is None/NaN/NaT."""
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def format_value(value: Any, max_chars: int | None = None) -> str:
    """Render one cell as the text a user or model would type.

    Floats print as Python does (``3.0``, ``2.5``), numpy scalars as their
    Python values, timestamps at midnight as dates, missing values as ``""``.
    Text longer than ``max_chars`` is cut and ends with ``…``.
    """
    if is_missing(value):
        text = ""
    elif isinstance(value, pd.Timestamp | datetime):
        ts = pd.Timestamp(value)
        text = ts.date().isoformat() if ts == ts.normalize() else ts.isoformat()
    elif isinstance(value, date):
        text = value.isoformat()
    elif isinstance(value, float | np.floating):
        text = repr(float(value))
    elif isinstance(value, np.generic):
        text = str(value.item())
    else:
        text = str(value)
    return clip(text, max_chars)


def clip(text: str, max_chars: int | None) -> str:
    """Cut ``text`` to at most ``max_chars`` characters, marking the cut with ``…``."""
    if max_chars is None or len(text) <= max_chars:
        return text
    if max_chars <= 1:
        return ELLIPSIS[:max_chars]
    return text[: max_chars - 1] + ELLIPSIS
