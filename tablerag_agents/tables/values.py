"""Column kinds, value formatting and number parsing shared by tables, indexes and solvers."""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any, Literal

import numpy as np
import pandas as pd

ColumnKind = Literal["int", "float", "bool", "datetime", "text"]

ELLIPSIS = "…"

_CURRENCY = "$£€¥₹"
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$")
_DECIMAL = re.compile(r"^[+-]?(\d+(\.\d+)?|\.\d+)$")
_SCIENTIFIC = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
#: Currency signs, ``%`` and spaces, dropped anywhere in a cell by ``loose``.
_LOOSE_DROP = str.maketrans("", "", _CURRENCY + "%\u00a0 ")
_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}


_NUMBER_IN_TEXT = re.compile(r"(?<![\w.,])[-\u2212]?[$£€¥₹]?\d[\d,]*(?:\.\d+)?%?")


def numbers_in_text(text: str) -> set[float]:
    """The numbers written with digits in prose (``"1,234"``, ``"$3.50"``, the 1 of ``"1st"``).

    A comma run that is no thousands grouping (``"1,2,3"``) gives each of its parts.
    """
    found: set[float] = set()
    for match in _NUMBER_IN_TEXT.findall(text):
        raw = match.rstrip(",")
        value = parse_number(raw)
        if value is not None:
            found.add(value)
            continue
        for part in raw.split(","):
            value = parse_number(part)
            if value is not None:
                found.add(value)
    return found


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


def format_value(value: Any, max_chars: int | None = None, *, int_floats: bool = False) -> str:
    """Render one cell as the text a user or model would type.

    Floats print as Python does (``3.0``, ``2.5``), numpy scalars as their
    Python values, timestamps at midnight as dates, missing values as ``""``.
    Text longer than ``max_chars`` is cut and ends with ``…``.

    Args:
        value: The cell.
        max_chars: Longest text (``None``: no cut).
        int_floats: Print floats with an integer value as integers (``3``, not
            ``3.0``), as the solver prompts do.
    """
    if is_missing(value):
        text = ""
    elif int_floats and isinstance(value, float) and value.is_integer():
        text = str(int(value))
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


def parse_number(
    text: object, *, words: bool = False, scientific: bool = False, loose: bool = False
) -> float | None:
    """Return the number written in ``text``, or None when it is not just a number.

    Always accepted: a sign (also the Unicode minus), digits with an optional
    decimal part, thousands separators (``"12,467"``), and surrounding
    whitespace. Text with words around the number (``"3 times"``) is not a
    number.

    Args:
        text: The text (any object, via ``str``).
        words: Also read the words ``zero`` .. ``twenty`` (answers: ``"three"``).
        scientific: Also read an exponent and a bare trailing point (``"1e3"``,
            ``"3."``).
        loose: Drop currency signs, ``%`` and spaces wherever they stand
            (``"$ 1 200"``, cells of a column); otherwise only a leading currency
            sign (after an optional sign) and a trailing ``%`` are dropped.
    """
    s = str(text).strip().replace("\u2212", "-").replace("\u00a0", "")
    if words and s.lower() in _NUMBER_WORDS:
        return float(_NUMBER_WORDS[s.lower()])
    if loose:
        s = s.translate(_LOOSE_DROP)
    else:
        s = s.lstrip(_CURRENCY).rstrip("%").strip()
        if s.startswith(("-", "+")) and len(s) > 1 and s[1] in _CURRENCY:
            s = s[0] + s[2:]
    if _THOUSANDS.match(s):
        s = s.replace(",", "")
    if not (_SCIENTIFIC if scientific else _DECIMAL).match(s):
        return None
    return float(s)
