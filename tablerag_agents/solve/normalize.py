"""Answer normalisation for table QA: text, numbers, dates and multi-answer lists.

Two answers match when, after normalisation, they are the same number (``"1,234"``,
``"1234"`` and ``"1234.0"`` are equal; a prediction with more decimals than the
gold value is rounded to the gold's precision), the same calendar date
(``"January 6, 1979"`` == ``"1979-01-06"``) or the same text (lower case, accents,
punctuation, articles and extra whitespace removed). Scoring lists of
answers against gold ones is the evaluation harness's business
(:mod:`tablerag_agents.evaluation.denotation`).
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from tablerag_agents.tables import values

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = re.compile(r"[^\w\s]|_")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_SPACES = re.compile(r"\s+")
_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
_MONTHS["sept"] = 9
_DATE_PATTERNS = (
    # 1979-01-06, 1979/1/6
    (re.compile(r"^(\d{4})[-/](\d{1,2})[-/](\d{1,2})$"), ("y", "m", "d")),
    # January 6, 1979 / Jan 6 1979
    (re.compile(r"^([a-z]+)\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})$"), ("M", "d", "y")),
    # 6 January 1979
    (re.compile(r"^(\d{1,2})(?:st|nd|rd|th)? ([a-z]+)\.?,? (\d{4})$"), ("d", "M", "y")),
    # January 1979
    (re.compile(r"^([a-z]+)\.?,? (\d{4})$"), ("M", "y")),
)


def strip_accents(text: str) -> str:
    """Return ``text`` without combining accents (``"Díaz"`` -> ``"Diaz"``)."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def normalize_text(text: str) -> str:
    """Lower-case, drop accents, punctuation and articles, and squeeze whitespace.

    Thousands separators go before punctuation, so ``"1,000 km"`` is ``"1000 km"``.
    """
    text = _THOUSANDS.sub("", strip_accents(str(text)).lower())
    text = _PUNCT.sub(" ", text)
    # An answer that is only an article ("A", a grade or a group name) keeps it.
    without_articles = _SPACES.sub(" ", _ARTICLES.sub(" ", text)).strip()
    return without_articles or _SPACES.sub(" ", text).strip()


def parse_number(text: str) -> float | None:
    """Return the number written in ``text`` or None.

    Accepts thousands separators (``"12,467"``), a leading currency sign, a
    trailing ``%``, a Unicode minus, an exponent and the words zero..twenty.
    Text with other words around the number (``"3 times"``) is not a number.
    """
    return values.parse_number(text, words=True, scientific=True)


def parse_date(text: str) -> date | tuple[int, int] | None:
    """Return the calendar date in ``text`` (or ``(year, month)`` for "May 2001")."""
    s = _SPACES.sub(" ", strip_accents(str(text)).lower().strip())
    for pattern, fields in _DATE_PATTERNS:
        m = pattern.match(s)
        if not m:
            continue
        parts: dict[str, int] = {}
        for key, raw in zip(fields, m.groups(), strict=True):
            if key == "M":
                if raw not in _MONTHS:
                    break
                parts["m"] = _MONTHS[raw]
            else:
                parts[key] = int(raw)
        else:
            try:
                if "d" in parts:
                    return date(parts["y"], parts["m"], parts["d"])
                return (parts["y"], parts["m"]) if 1 <= parts["m"] <= 12 else None
            except ValueError:
                return None
    return None


def _decimals(text: str) -> int:
    m = re.search(r"\.(\d+)", text)
    return len(m.group(1)) if m else 0


@dataclass(frozen=True)
class NormalizedValue:
    """One answer in comparable form: a number, a date, and/or normalised text."""

    raw: str
    text: str
    number: float | None
    date: date | tuple[int, int] | None

    def matches(self, gold: NormalizedValue) -> bool:
        """Return True if this (predicted) value equals the ``gold`` value."""
        if self.number is not None and gold.number is not None:
            if abs(self.number - gold.number) <= 1e-9 * max(1.0, abs(gold.number)):
                return True
            # "3.3333" matches a gold "3.33", but "2.4" never matches a gold "2".
            places = _decimals(gold.raw)
            return places > 0 and round(self.number, places) == round(gold.number, places)
        if self.date is not None and gold.date is not None:
            return self.date == gold.date
        return bool(self.text) and self.text == gold.text


def normalize_value(value: object) -> NormalizedValue:
    """Build the comparable form of one answer value (any object, via ``str``)."""
    if isinstance(value, bool):
        raw = "yes" if value else "no"
    elif isinstance(value, float) and value.is_integer():
        raw = str(int(value))
    else:
        raw = str(value).strip()
    number = parse_number(raw)
    return NormalizedValue(
        raw=raw,
        text=normalize_text(raw),
        number=number,
        date=None if number is not None else parse_date(raw),
    )


def answer_key(items: Sequence[object]) -> str:
    """A hashable key under which equal answers (by this module's rules) collide.

    Used for majority votes: numbers by value, dates by date, text normalised;
    the order of list items does not matter.
    """
    keys = set()
    for item in items:
        v = normalize_value(item)
        if v.number is not None:
            keys.add(f"n:{v.number:.10g}")
        elif v.date is not None:
            keys.add(f"d:{v.date}")
        else:
            keys.add(f"t:{v.text}")
    return "|".join(sorted(keys))
