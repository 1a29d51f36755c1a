"""A second opinion: read the table once more and see whether the reading agrees.

A small model's program either is right or is wrong in its own way; a reading
of the table text (:class:`~tablerag_agents.solve.read_table.ReadTableSolver`)
fails differently. When both land on the same answer, it is more likely right
(Liu et al.'s mixed self-consistency with one program and one reading). The
answer stays the program's: the reading only informs the confidence
(:func:`~tablerag_agents.solve.confidence.run_confidence`), so the feature costs
one model call per question and never changes what is answered.
"""

from __future__ import annotations

import time

import pandas as pd

from tablerag_agents.solve.base import Solver, SolverContext, SolverResult, Vote, as_context
from tablerag_agents.solve.checks import as_asked
from tablerag_agents.solve.confidence import final_code


def reading_vote(reading: SolverResult, question: str) -> Vote:
    """The reading's answer in the form the question asks for (no items: no value)."""
    items = as_asked(reading.answer_items, question) if reading.ok else []
    return Vote(source=reading.solver, items=items)


class SecondOpinionSolver:
    """Run ``solver``; when a program computed its answer, ask ``reader`` too.

    The result is ``solver``'s, with the reading as ``second_opinion`` and the
    reading's model call added to its trace, tokens and seconds. A reading is
    only asked for a program's answer: a reading checking a reading is not a
    second opinion.

    Args:
        solver: The solver whose answer is returned.
        reader: The solver asked for the second opinion (a reading of the table).
    """

    def __init__(self, solver: Solver, reader: Solver) -> None:
        """Store the two solvers."""
        self.solver = solver
        self.reader = reader
        self.name = solver.name

    def solve(self, question: str | SolverContext, df: pd.DataFrame | None = None) -> SolverResult:
        """Answer ``question`` over ``df`` (or a :class:`SolverContext`), then cross-check."""
        ctx = as_context(question, df)
        result = self.solver.solve(ctx)
        if not result.ok or final_code(result) is None:
            return result
        start = time.perf_counter()
        reading = self.reader.solve(ctx)
        vote = reading_vote(reading, ctx.question)
        steps = [step.model_copy() for step in reading.trace]
        for i, step in enumerate(steps, start=len(result.trace) + 1):
            step.step = i
            step.observation = step.observation or f"second opinion: {'|'.join(vote.items)}"
        return result.model_copy(
            update={
                "second_opinion": vote,
                "trace": [*result.trace, *steps],
                "input_tokens": result.input_tokens + reading.input_tokens,
                "output_tokens": result.output_tokens + reading.output_tokens,
                "cached_tokens": result.cached_tokens + reading.cached_tokens,
                "seconds": result.seconds + time.perf_counter() - start,
            }
        )
