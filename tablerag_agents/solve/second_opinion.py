"""A second opinion: answer once more another way and see whether the two agree.

A small model's program either is right or is wrong in its own way; a reading
of the table text (:class:`~tablerag_agents.solve.read_table.ReadTableSolver`)
or a program in another language (pandas for SQL) fails differently. When both
land on the same answer, it is more likely right (Liu et al.'s mixed
self-consistency with two members). The answer stays the first solver's: the
second only informs the confidence
(:func:`~tablerag_agents.solve.confidence.run_confidence`), so the feature costs
one more solver run per question and never changes what is answered.
"""

from __future__ import annotations

import time

import pandas as pd

from tablerag_agents.solve.base import (
    Solver,
    SolverContext,
    SolverResult,
    TraceStep,
    Vote,
    as_context,
)
from tablerag_agents.solve.checks import as_asked
from tablerag_agents.solve.confidence import final_code

SECOND_OPINION = "second opinion: "
"""How the trace step of a second opinion starts its observation."""


def opinion_vote(other: SolverResult, question: str) -> Vote:
    """The other solver's answer in the form the question asks for (no items: no value)."""
    items = as_asked(other.answer_items, question) if other.ok else []
    return Vote(source=other.solver, items=items, code=final_code(other) or "")


class SecondOpinionSolver:
    """Run ``solver``; when a program computed its answer, ask ``checker`` too.

    The result is ``solver``'s, with the checker's answer as ``second_opinion``
    and one trace step that says it ("second opinion: ...", the checker's last
    program as its code) and carries the checker's tokens; seconds add up. The
    checker's own steps stay out of the trace, so its code is never taken for
    the answer's. A checker is only asked for a program's answer, and never
    when it is the solver that answered (a path checking itself is no second
    opinion).

    Args:
        solver: The solver whose answer is returned.
        checker: The solver asked for the second opinion (a reading of the
            table, or a program of another kind).
    """

    def __init__(self, solver: Solver, checker: Solver) -> None:
        """Store the two solvers."""
        self.solver = solver
        self.checker = checker
        self.name = solver.name

    def solve(self, question: str | SolverContext, df: pd.DataFrame | None = None) -> SolverResult:
        """Answer ``question`` over ``df`` (or a :class:`SolverContext`), then cross-check."""
        ctx = as_context(question, df)
        result = self.solver.solve(ctx)
        if not result.ok or final_code(result) is None or result.solver == self.checker.name:
            return result
        start = time.perf_counter()
        other = self.checker.solve(ctx)
        vote = opinion_vote(other, ctx.question)
        step = TraceStep(
            step=len(result.trace) + 1,
            action="answer",
            thought=f"second opinion from {other.solver}",
            code=vote.code,
            observation=f"{SECOND_OPINION}{'|'.join(vote.items)}",
            input_tokens=other.input_tokens,
            output_tokens=other.output_tokens,
            cached_tokens=other.cached_tokens,
        )
        return result.model_copy(
            update={
                "second_opinion": vote,
                "trace": [*result.trace, step],
                "input_tokens": result.input_tokens + other.input_tokens,
                "output_tokens": result.output_tokens + other.output_tokens,
                "cached_tokens": result.cached_tokens + other.cached_tokens,
                "seconds": result.seconds + time.perf_counter() - start,
            }
        )
