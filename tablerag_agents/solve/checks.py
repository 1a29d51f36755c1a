"""Execution checks on a run's answer: is it a value this table and question can give?

A vote (:class:`~tablerag_agents.solve.combine.VotingSolver`) drops the runs
whose answer fails a check, and a single run's confidence is lowered
(:mod:`tablerag_agents.solve.confidence`). The checks read only the question,
the program, the answer and the tables, never a gold answer, and hold for any
table:

* **no value**: the answer is a placeholder (``None``, ``NaN``, ``N/A``) that is
  not a cell;
* **count above the row count**: a program that counts (``COUNT(``, ``len(``,
  ``.count()``, ``.shape[0]``...) and does no other arithmetic returned one
  whole number larger than the rows of all tables together;
* **not a cell**: a text answer (no number, no date) to a question that does not
  ask for a quantity appears in no cell or header, not even as a whole-word part
  of one (a part of ``"Los Angeles, California"`` is fine), nor in the question
  (``"more"`` for "more or less?");
* **not yes/no**: a question that asks yes or no got something else;
* **not an option**: a question that offers options ("was it X or Y?") got
  something that is not one of them (a yes, the two values compared).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cached_property

import pandas as pd

from tablerag_agents.solve.normalize import is_placeholder, normalize_text, normalize_value
from tablerag_agents.solve.question_kind import asks_yes_no, misses_choice, yes_no_answer

NO_VALUE = "no value"
"""Start of the reason a run with no answer (or a placeholder) is dropped."""
NOT_YES_NO = "not a yes/no answer"
"""The reason a yes/no question's run that answered something else is dropped."""
NOT_AN_OPTION = "not one of the options the question names"
"""The reason a choice question's run ("was it X or Y?") that answered something else fails."""

MAX_UNIQUE = 20_000
"""Distinct values read per column (bounds the cost of the cell check on huge tables)."""
MAX_TEXTS = 200_000
"""Distinct texts read over all columns; past it the cell check passes every answer."""

_COUNTS = re.compile(
    r"\bcount\s*\(|\blen\s*\(|\.(?:count|nunique)\s*\(|\.shape\s*\[\s*0\s*\]|\.size\b|"
    r"value_counts",
    re.I,
)
_OTHER_ARITHMETIC = re.compile(
    r"\b(?:sum|avg|mean|total|max|min|median|abs|round)\s*\(|"
    r"\.(?:sum|mean|max|min|median|cumsum|diff|prod|idxmax|idxmin)\s*\(|"
    r"[-+*/]\s*\d|\d\s*[-+*/]",
    re.I,
)
_QUANTITY = re.compile(
    r"\bhow\s+(?:many|much|long|old|far|tall|high|big|large|often|fast|wide|deep)\b|"
    r"\b(?:total|sum|average|mean|difference|number|amount|percentage|percent|ratio|"
    r"combined)\b",
    re.I,
)


def asks_quantity(question: str) -> bool:
    """True if ``question`` asks for an amount, a measure or a computed value."""
    return bool(_QUANTITY.search(question))


def counts_rows(code: str) -> bool:
    """True if ``code`` counts (rows or values) and does no other arithmetic."""
    return bool(_COUNTS.search(code)) and not _OTHER_ARITHMETIC.search(code)


class TableCells:
    """The normalised cell and header texts of some tables, for "is it a cell?" checks.

    A column's distinct values beyond ``max_unique`` are not read; when the
    tables hold more than ``max_texts`` distinct texts, reading stops and
    :meth:`has` says yes to everything (an unread cell must not make an
    answer look implausible).

    Args:
        tables: The tables, by id.
        max_unique: Distinct values read per column.
        max_texts: Distinct texts read over all columns.
    """

    def __init__(
        self,
        tables: Mapping[str, pd.DataFrame],
        *,
        max_unique: int = MAX_UNIQUE,
        max_texts: int = MAX_TEXTS,
    ):
        """Keep the tables; the texts are read on first use."""
        self.tables = tables
        self.max_unique = max_unique
        self.max_texts = max_texts
        self.rows = sum(len(frame) for frame in tables.values())

    @cached_property
    def _texts(self) -> tuple[frozenset[str], str] | None:
        """The texts and their joined form; None when there were too many to read."""
        found: set[str] = set()
        for frame in self.tables.values():
            found.update(normalize_text(str(c)) for c in frame.columns)
            for col in range(frame.shape[1]):
                if len(found) > self.max_texts:
                    return None
                column = frame.iloc[:, col].dropna()
                try:  # distinct values first: only those become text
                    values = pd.unique(column)[: self.max_unique]
                except TypeError:  # unhashable cells (lists)
                    values = pd.unique(column.astype(str))[: self.max_unique]
                found.update(normalize_text(str(v)) for v in values)
        found.discard("")
        # One string with every text between spaces: a whole-word part is one search.
        return frozenset(found), "\n".join(f" {t} " for t in sorted(found))

    def has(self, text: str) -> bool:
        """True if ``text`` is a cell or header, or a whole-word part of one (normalised)."""
        norm = normalize_text(text)
        if not norm:
            return False
        if self._texts is None:
            return True
        exact, joined = self._texts
        return norm in exact or f" {norm} " in joined


def drop_reason(items: Sequence[str], code: str, question: str, cells: TableCells) -> str | None:
    """Why a run's answer fails the execution checks (module docstring), or None if it passes.

    A reason starting with :data:`NO_VALUE` or equal to :data:`NOT_YES_NO` means
    the run gave no usable answer; the others (a count above the row count, not
    a cell) mean an implausible one.

    Args:
        items: The run's answer items.
        code: The program that computed them ("" for a reading).
        question: The question asked.
        cells: The tables' texts.
    """
    items = [str(i) for i in items if str(i).strip()]
    if not items:
        return NO_VALUE
    if all(is_placeholder(i) and not cells.has(i) for i in items):
        return f"{NO_VALUE} ({items[0]!r})"
    if asks_yes_no(question):
        return None if yes_no_answer(items, question) else NOT_YES_NO
    if misses_choice(question, items):
        return NOT_AN_OPTION
    if code and len(items) == 1 and counts_rows(code):
        number = normalize_value(items[0]).number
        if number is not None and number == int(number) and number > cells.rows:
            return f"a count of {number:g} is more than the {cells.rows} rows"
    if asks_quantity(question):
        return None
    asked = f" {normalize_text(question)} "
    for item in items:
        value = normalize_value(item)
        if value.number is not None or value.date is not None:
            continue
        if not re.search(r"[^\W\d_]", item) or f" {value.text} " in asked:
            continue
        if not cells.has(item):
            return f"{item!r} is not a cell of the table"
    return None


def as_asked(items: Sequence[str], question: str) -> list[str]:
    """``items`` as the question wants them: the yes/no verdict for a yes/no question."""
    if asks_yes_no(question):
        verdict = yes_no_answer(items, question)
        if verdict is not None:
            return [verdict]
    return list(items)


def implausible(reason: str | None) -> bool:
    """True if ``reason`` (from :func:`drop_reason`) drops a real but implausible answer."""
    return reason is not None and not reason.startswith(NO_VALUE) and reason != NOT_YES_NO
