"""How likely an answer is right, from what its runs showed (no gold answer involved).

A **vote** (:class:`~tablerag_agents.solve.combine.VotingSolver`) scores its
winner by agreement: the votes backing the winner divided by every run the
vote started, dropped ones included. That is the winner's share of the valid
votes times the share of runs that were valid, so agreement among few
survivors is penalised: 11 of 11 runs agreeing gives 1.0, 6 of 11 gives 0.55,
3 agreeing runs when 8 failed their checks give 0.27, and no valid run gives 0.

A **single run** cannot agree with anything, so it gets a prior, lowered by
what went wrong on the way (:func:`run_confidence`). The priors follow the
graph's dev records (``bench/results/eval/dev/``: WTQ and TabFact, seed 0, 30
questions, two commits each): a first-solver SQL answer with no failed code
was right 21 of 45 times on WTQ and 22 of 42 on TabFact, so 0.5; after failed
code (in any attempt) WTQ was right 1 of 10 times (TabFact 11 of 16, where a
yes/no guess is right half the time), so failed code or a retry halves it.
These samples are small and no first-solver reading is among them (its 0.35
is a prior): ``tablerag report``'s accuracy-coverage curve is the check.

Two shapes of answer were seldom right in the WTQ dev records of session 22
(180 graph answers over 7 runs, seed 0): several items (1 right of 19: a query
that left out a condition returns many rows) and a program's lone zero (1 of
10: a count or sum whose filter matched nothing). Each halves the estimate; a
zero or a list can still be right, so neither is dropped or retried for it.

A **second opinion** (``Context.second_opinion``,
:class:`~tablerag_agents.solve.second_opinion.SecondOpinionSolver`) answers
once more another way (by default a reading of the table): the same answer
multiplies the estimate by :data:`AGREED`, another answer by :data:`DISAGREED`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from tablerag_agents.solve.base import SolverResult, Vote
from tablerag_agents.solve.checks import TableCells, as_asked, drop_reason
from tablerag_agents.solve.normalize import answer_key, parse_number

PROGRAM_RUN = 0.5
"""One program (SQL or Python) ran without error and its answer passed the checks."""
READING = 0.35
"""One answer read off the table text, with no program to check it."""
REPAIRED = 0.5
"""Factor when code failed on the way (a repaired query or function)."""
RETRIED = 0.5
"""Factor when earlier solvers produced no value (the graph's retries)."""
SEVERAL_ITEMS = 0.5
"""Factor when the answer has more than one item."""
ZERO = 0.5
"""Factor when a program's answer is a single zero."""
IMPLAUSIBLE = 0.25
"""Factor when the answer fails an execution check (:func:`~.checks.drop_reason`)."""
AGREED = 1.6
"""Factor when the second opinion gave the same answer (:func:`agrees`)."""
DISAGREED = 0.6
"""Factor when the second opinion gave another answer."""

PROGRAM_ACTIONS = ("sql", "python")
"""Trace actions that ran model-written code."""


def vote_confidence(votes: Sequence[Vote], items: Sequence[str]) -> float:
    """Share of all runs of a vote (dropped ones included) whose valid answer is ``items``."""
    if not votes or not items:
        return 0.0
    key = answer_key(items)
    backing = sum(1 for v in votes if v.dropped is None and v.items and answer_key(v.items) == key)
    return backing / len(votes)


def same_answer(items: Sequence[str], opinion: Sequence[str], question: str) -> bool:
    """True if ``items`` and a second ``opinion`` (already as asked) are the same answer."""
    return answer_key(as_asked(items, question)) == answer_key(opinion)


def agrees(result: SolverResult) -> bool | None:
    """Whether ``result``'s second opinion gave its answer (None: no second opinion value)."""
    vote = result.second_opinion
    if vote is None or not vote.items or not result.answer_items:
        return None
    return same_answer(result.answer_items, vote.items, result.question)


def final_code(result: SolverResult) -> str | None:
    """The last program that ran without error in ``result``'s trace (None: a reading)."""
    for step in reversed(result.trace):
        if step.action in PROGRAM_ACTIONS and step.ok:
            return step.code
    return None


def run_confidence(
    result: SolverResult,
    tables: Mapping[str, pd.DataFrame],
    *,
    retried: bool = False,
    cells: TableCells | None = None,
) -> float:
    """The confidence of ``result``: its own (a vote's) or the single-run estimate.

    A single run starts at :data:`PROGRAM_RUN` when a program computed the
    answer, else :data:`READING`, and is multiplied by :data:`REPAIRED` when
    code failed on the way, :data:`RETRIED` when earlier solvers gave no value,
    :data:`SEVERAL_ITEMS` for an answer of several items, :data:`ZERO` for a
    program's lone zero, :data:`IMPLAUSIBLE` when the answer fails an
    execution check, and :data:`AGREED` or :data:`DISAGREED` when a second
    opinion gave a value (capped at 1). No value gives 0.

    Args:
        result: The solver's result.
        tables: The tables it answered over (for the checks).
        retried: Earlier solvers of the same question produced no value.
        cells: The tables' texts, when already read.
    """
    if not result.ok:
        return 0.0
    if result.confidence is not None:
        return result.confidence
    code = final_code(result)
    score = READING if code is None else PROGRAM_RUN
    if result.code_errors:
        score *= REPAIRED
    if retried:
        score *= RETRIED
    items = result.answer_items
    if len(items) > 1:
        score *= SEVERAL_ITEMS
    if code is not None and len(items) == 1 and parse_number(items[0]) == 0:
        score *= ZERO
    checks = cells or TableCells(tables)
    if drop_reason(result.answer_items, code or "", result.question, checks) is not None:
        score *= IMPLAUSIBLE
    agreed = agrees(result)
    if agreed is not None:
        score *= AGREED if agreed else DISAGREED
    return min(score, 1.0)
