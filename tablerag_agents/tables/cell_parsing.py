"""Read the value a messy table cell stands for: numbers, money, durations, dates, years.

Each parser takes one cell's text and returns its value, or None when the text
is not of that kind. They never guess from context: a column-level decision
(which parser, day-first or month-first dates, the unit) is made by
:mod:`tablerag_agents.tables.column_types` from all the cells of a column.

Before parsing, :func:`core_text` removes what annotates a value rather than
being part of it: footnote marks (``[1]``, ``[note 3]``, ``†``, ``‡``, ``*``,
``§``), approximation words (``c.``, ``ca.``, ``approx.``, ``~``), and a
trailing note in brackets (``"1,234 (est.)"``, ``"168 (551)"``,
``"August 7, 1986 (age 27)"``): the value is the part before the brackets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

#: Cell texts that mean "no value" (compared in lower case, after :func:`core_text`).
MISSING_TEXTS = frozenset(
    {"", "-", "--", "–", "—", "―", "n/a", "n.a.", "na", "none", "null", "nan", "?",
     "tbd", "tba", "unknown", "×", "x"}
)  # fmt: skip

_FOOTNOTE_BRACKETS = re.compile(r"\[[^\[\]]{1,20}\]")
_APPROX = re.compile(
    r"^(?:c\.|ca\.|circa\b|approx\.?|approximately\b|about\b|around\b|est\.|~|≈)\s*", re.I
)
_TRAILING_NOTE = re.compile(r"\s*\([^()]*\)$")
_TRAILING_EST = re.compile(r"\s+(?:est\.?|estimated|approx\.?)$", re.I)
_MARKS = " \t\n*†‡§¶^"
"""Footnote marks (and spaces) stripped from the end; str.rstrip keeps this linear."""
_EST_ENDINGS = frozenset({"est.", " est", "ated", "rox.", "prox"})
_APPROX_STARTS = frozenset("cCaAeE~≈")


def core_text(text: str) -> str:
    """The part of a cell that holds its value: footnote marks, approximation words,
    trailing bracketed notes and extra whitespace removed (``"1,234 (est.)[2]"`` ->
    ``"1,234"``). Text that is only a note (``"(none)"``) is kept as it is.
    """
    # Cheap membership tests first: most cells need none of the regular expressions.
    s = _FOOTNOTE_BRACKETS.sub("", text) if "[" in text else text
    s = " ".join(s.split()).replace(" ,", ",")  # single spaces keep every regex below linear
    s = s.rstrip(_MARKS)
    while s.endswith(")"):
        cut = _TRAILING_NOTE.sub("", s)
        if cut == s or not cut:
            break
        s = cut.rstrip(_MARKS)
    if s[-4:].lower() in _EST_ENDINGS:
        s = _TRAILING_EST.sub("", s)
    if s[:1] in _APPROX_STARTS:
        s = _APPROX.sub("", s)
    return s.strip()


def is_missing_text(core: str) -> bool:
    """True for a core text that marks a missing value (``""``, ``"—"``, ``"n/a"``...)."""
    return core.lower() in MISSING_TEXTS


# --- numbers, money, percentages, units -------------------------------------------------

_CURRENCY_SIGNS = {"$": "$", "£": "£", "€": "€", "¥": "¥", "₹": "₹", "₩": "₩", "₽": "₽"}
_CURRENCY_CODES = {"usd", "eur", "gbp", "jpy", "cad", "aud", "chf", "cny", "inr", "rs", "rs."}
_SCALES = {
    "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12,
    "k": 1e3, "m": 1e6, "mn": 1e6, "mil": 1e6, "mio": 1e6, "b": 1e9, "bn": 1e9,
}  # fmt: skip
#: Scale abbreviations read as scales only after a currency (``"$5m"``); else units (``"5 m"``).
_ERAS = {"BC": -1, "BCE": -1, "AD": 1, "CE": 1}
"""Era words after a year: BC years are negative."""
_SHORT_SCALES = {"k", "m", "mn", "mil", "mio", "b", "bn"}
_NUMBER = re.compile(
    r"""^(?P<sign>[+\-−–±]?)\s*
    (?P<cur>(?:[A-Z]{1,3})?[$£€¥₹₩₽]|(?:USD|EUR|GBP|JPY|CAD|AUD|CHF|CNY|INR|Rs\.?)\s?)?
    \s*(?P<sign2>[+\-−]?)\#?
    (?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:[\u00a0\u2009\u202f ]\d{3})+(?:\.\d+)?
       |\d+(?:\.\d+)?|\.\d+)
    (?P<ord>st|nd|rd|th)?\.?
    \s*(?P<scale>thousand|million|billion|trillion)?
    \s*(?P<pct>%|percent\b|per\ cent\b)?
    \s*(?P<unit>/?[^\W\d_][\w°²³µ/.'’-]{0,14}(?:\s[^\W\d_][\w°²³/.]{0,10})?|°\w?|[$£€¥₹])?$""",
    re.X,
)


@dataclass(frozen=True)
class Quantity:
    """A number read from a cell, with what was written around it.

    Attributes:
        value: The number, scaled (``"$1.2 million"`` -> 1200000.0).
        currency: The currency sign or code (``"$"``, ``"£"``, ``"USD"``), or ``""``.
        percent: The cell had a ``%`` sign (``value`` is the number as written: 45 for 45%).
        unit: The word after the number (``"km"``, ``"episodes"``), or ``""``.
        ordinal: Written as an ordinal (``"2nd"``).
        separated: Written with thousands separators (``"1,234"``).
    """

    value: float
    currency: str = ""
    percent: bool = False
    unit: str = ""
    ordinal: bool = False
    separated: bool = False


def parse_quantity(core: str) -> Quantity | None:
    """Read a number with optional sign, currency, scale word, ``%``, ordinal or unit.

    ``"1,234"`` -> 1234; ``"$1.2 million"`` -> 1200000 ($); ``"£10.2 billion"``;
    ``"45%"`` -> 45 (percent); ``"−3.1"`` -> -3.1; ``"2nd"`` -> 2 (ordinal);
    ``"16 years"`` -> 16 (unit ``years``); ``"$5m"`` -> 5000000; ``"9 000"`` -> 9000;
    ``"4000 BC"`` -> -4000.
    Text with more than two words after the number is not a quantity.
    """
    m = _NUMBER.match(core)
    if m is None:
        return None
    sign = "-" if (m["sign"] in "-−–" and m["sign"]) or m["sign2"] in ("-", "−") else ""
    if m["sign"] in "-−–" and m["sign"] and m["sign2"] in ("-", "−") and m["sign2"]:
        return None  # "--5"
    raw = m["num"]
    separated = bool(re.search(r"[,\u00a0\u2009\u202f ]", raw))
    value = float(re.sub(r"[,\u00a0\u2009\u202f ]", "", raw))
    currency = (m["cur"] or "").strip()
    unit = (m["unit"] or "").strip()
    scale = m["scale"]
    if unit and unit.lower() in _CURRENCY_CODES and not currency:
        currency, unit = unit.upper(), ""
    elif unit in _CURRENCY_SIGNS and not currency:
        currency, unit = unit, ""
    if currency and not scale and unit.lower().rstrip(".") in _SHORT_SCALES:
        scale, unit = unit.lower().rstrip("."), ""
    if scale:
        value *= _SCALES[scale.lower()]
    if unit.upper() in _ERAS and not (currency or m["pct"] or m["ord"]):
        sign = "" if _ERAS[unit.upper()] > 0 else "-"
        unit = ""
    if m["ord"] and (currency or m["pct"] or "." in raw):
        return None
    return Quantity(
        value=-value if sign else value,
        currency=currency,
        percent=bool(m["pct"]),
        unit=unit,
        ordinal=bool(m["ord"]),
        separated=separated,
    )


# --- durations ------------------------------------------------------------------------

_CLOCK = re.compile(r"^\+?(?:(?P<h>\d+):)?(?P<m>\d{1,2}):(?P<s>\d{2}(?:\.\d+)?)$")
_WORDS_DURATION = re.compile(
    r"""^(?:(?P<h>\d+(?:\.\d+)?)\s*h(?:ours?|rs?)?\.?\s*)?
    (?:(?P<m>\d+(?:\.\d+)?)\s*m(?:in(?:utes?|s)?)?\.?\s*)?
    (?:(?P<s>\d+(?:\.\d+)?)\s*s(?:ec(?:onds?|s)?)?\.?)?$""",
    re.X | re.I,
)


def parse_duration(core: str) -> float | None:
    """Seconds in a clock-style or worded duration, else None.

    ``"3:05.2"`` -> 185.2; ``"1:34:45.026"`` -> 5685.026; ``"0:33"`` -> 33;
    ``"3m 37s"`` -> 217; ``"2 h 5 min"`` -> 7500. Times of day (``"7:00 PM"``),
    lengths (``"5 m"``) and decades (``"1990s"``) are not durations.
    """
    m = _CLOCK.match(core)
    if m is not None:
        hours = float(m["h"] or 0)
        return hours * 3600 + float(m["m"]) * 60 + float(m["s"])
    m = _WORDS_DURATION.match(core)
    if m is not None and any(m.group(g) for g in ("h", "m", "s")):
        if not (m["h"] or m["s"]) and not re.search(r"min", core, re.I):
            return None  # "5 m" is a length, "5 min" a duration
        if not (m["h"] or m["m"]) and not re.search(r"sec", core, re.I):
            return None  # "1990s" is a decade, "45 sec" a duration
        return float(m["h"] or 0) * 3600 + float(m["m"] or 0) * 60 + float(m["s"] or 0)
    return None


# --- dates ----------------------------------------------------------------------------

_MONTHS = {
    name: i
    for i, names in enumerate(
        [
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}  # fmt: skip
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAY = re.compile(r"^(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+", re.I)
_DAY_RANGE = r"(?:\s*[–-]\s*\d{1,2})?"
_DATE_FORMS = [
    re.compile(r"^(?P<year>\d{4})-(?P<mm>\d{1,2})-(?P<day>\d{1,2})$"),
    re.compile(rf"^(?P<day>\d{{1,2}}){_DAY_RANGE}\s+{_MONTH},?\s+(?P<year>\d{{4}})$", re.I),
    re.compile(
        rf"^{_MONTH}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?{_DAY_RANGE},?\s+(?P<year>\d{{4}})$",
        re.I,
    ),
    re.compile(rf"^{_MONTH},?\s+(?P<year>\d{{4}})$", re.I),
]
_NUMERIC_DATE = re.compile(r"^(?P<a>\d{1,2})[/.](?P<b>\d{1,2})[/.](?P<year>\d{4})$")


@dataclass(frozen=True)
class ParsedDate:
    """A calendar date read from a cell.

    Attributes:
        value: The date (the 1st of the month when only month and year are written).
        month_only: Only month and year were written (``"June 1998"``).
        ambiguous: Written as ``a/b/yyyy`` with both ``a`` and ``b`` <= 12: the
            column decides whether the day comes first.
    """

    value: date
    month_only: bool = False
    ambiguous: bool = False


def _make_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def parse_date(core: str, *, day_first: bool = True) -> ParsedDate | None:
    """A date written with a year: ``"12 June 1998"``, ``"June 12, 1998"``, ``"1998-06-12"``,
    ``"12/06/1998"`` (day first unless ``day_first`` is False), ``"June 1998"`` (month
    only), ``"Saturday, April 13, 2002"``, ``"October 20–22, 1982"`` (the first day).
    Dates without a year (``"December 1"``) are not parsed: the year is unknown.
    """
    s = _WEEKDAY.sub("", core)
    for form in _DATE_FORMS:
        m = form.match(s)
        if m is None:
            continue
        groups = m.groupdict()
        month = int(groups["mm"]) if groups.get("mm") else _MONTHS[groups["month"].lower()]
        day = int(groups["day"]) if groups.get("day") else 1
        value = _make_date(int(groups["year"]), month, day)
        return None if value is None else ParsedDate(value, month_only=not groups.get("day"))
    m = _NUMERIC_DATE.match(s)
    if m is None:
        return None
    a, b, year = int(m["a"]), int(m["b"]), int(m["year"])
    ambiguous = a <= 12 and b <= 12
    if a > 12 or (ambiguous and day_first):
        day, month = a, b
    else:
        day, month = b, a
    value = _make_date(year, month, day)
    return None if value is None else ParsedDate(value, ambiguous=ambiguous)


# --- years and year ranges ------------------------------------------------------------

_YEAR = re.compile(r"^(?P<year>\d{3,4})(?:\s*(?P<era>BC|BCE|AD|CE))?$", re.I)
_ERA_FIRST = re.compile(r"^(?:AD|CE)\s*(?P<year>\d{1,4})$", re.I)
_YEAR_RANGE = re.compile(
    r"^(?P<start>\d{4})\s*(?:[–—-]|/|\bto\b)\s*"
    r"(?P<end>\d{4}|\d{2}|present|current|now|today|ongoing)?$",
    re.I,
)
MIN_YEAR, MAX_YEAR = 1000, 2100
"""Four-digit integers in this range read as years."""


def parse_year(core: str) -> int | None:
    """A year: ``"1998"``, ``"1998*"`` (after :func:`core_text`), ``"4000 BC"`` -> -4000,
    ``"AD 79"`` -> 79. Only 3-4 digit numbers, or any number with an era."""
    m = _YEAR.match(core)
    if m is not None:
        year = int(m["year"])
        era = (m["era"] or "").upper()
        return -year if era in ("BC", "BCE") else year
    m = _ERA_FIRST.match(core)
    return int(m["year"]) if m is not None else None


def parse_year_range(core: str) -> tuple[int, int | None] | None:
    """First and last year of a span: ``"1986–1990"``, ``"1999-00"`` -> (1999, 2000),
    ``"1989/90"``, ``"2012–present"`` and ``"1998-"`` -> (start, None). The end must
    not come before the start (``"2–1"`` scores are not ranges)."""
    m = _YEAR_RANGE.match(core)
    if m is None:
        return None
    start = int(m["start"])
    end_text = (m["end"] or "").lower()
    if not MIN_YEAR <= start <= MAX_YEAR:
        return None
    if not end_text or not end_text.isdigit():
        return start, None
    end = int(end_text)
    if len(end_text) == 2:
        end += start - start % 100
        if end < start:
            end += 100
    return (start, end) if start <= end <= MAX_YEAR else None


# --- lists ----------------------------------------------------------------------------

_LIST_SEPARATORS = re.compile(r"\s*(?:;|\n|\s/\s|,(?=\s))\s*")
_INLINE_SPACES = re.compile(r"[^\S\n]+")


def split_items(text: str) -> list[str]:
    """The items of a cell listing several values (``"Germany, France"``,
    ``"a; b"``, one per line), footnote marks removed; one item if it lists nothing."""
    # One space per run first: a long run of spaces would make the split quadratic.
    flat = _INLINE_SPACES.sub(" ", _FOOTNOTE_BRACKETS.sub("", text)).strip()
    parts = _LIST_SEPARATORS.split(flat)
    return [p for p in (x.strip() for x in parts) if p]
