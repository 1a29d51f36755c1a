"""Combine solvers: a fallback chain, and a vote over their answers.

``FallbackSolver`` tries solvers in order until one gives a real answer (SQL,
then Python, then reading the table). ``VotingSolver`` runs them all and keeps
the answer most of their runs agree on (mixed self-consistency: code and
reading vote together).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Sequence

import pandas as pd

from tablerag_agents.solve.base import Solver, SolverContext, SolverResult, as_context
from tablerag_agents.solve.normalize import answer_key

logger = logging.getLogger(__name__)


def is_real_answer(result: SolverResult) -> bool:
    """True if the solver produced a value without an error.

    Emptiness is the solver's verdict (no value, an error), never the value's:
    ``0``, ``"none"`` or ``"no"`` are answers like any other.
    """
    return result.ok


class _SolverGroup:
    """Several solvers used as one, reported under ``name``."""

    def __init__(self, solvers: Sequence[Solver], *, name: str) -> None:
        """Store the members (at least one)."""
        if not solvers:
            raise ValueError(f"{type(self).__name__} needs at least one solver")
        self.solvers = list(solvers)
        self.name = name


class FallbackSolver(_SolverGroup):
    """Run ``solvers`` in order and return the first real answer.

    A later solver runs only when the earlier ones failed or produced no value
    (a ``0`` is a value). If none answered, the last failure is returned.
    Tokens, seconds and iterations add up over every solver that ran, and the
    trace holds all of their steps.

    Args:
        solvers: Solvers to try, most precise first (e.g. SQL, process_df, ReadTable).
        name: Name reported in results.
    """

    def __init__(self, solvers: Sequence[Solver], *, name: str = "fallback") -> None:
        """Store the chain."""
        super().__init__(solvers, name=name)

    def solve(self, question: str | SolverContext, df: pd.DataFrame | None = None) -> SolverResult:
        """Answer ``question`` over ``df`` (or the tables of a :class:`SolverContext`)."""
        ctx = as_context(question, df)
        start = time.perf_counter()
        results: list[SolverResult] = []
        chosen: SolverResult | None = None
        for solver in self.solvers:
            res = solver.solve(ctx)
            results.append(res)
            if is_real_answer(res):
                chosen = res
                break
            logger.debug(
                "%s gave no real answer (%s); trying the next solver", res.solver, res.error
            )
        if chosen is None:
            chosen = results[-1]
        return merge_results(chosen, results, self.name, time.perf_counter() - start)


def merge_results(
    chosen: SolverResult, results: list[SolverResult], name: str, seconds: float
) -> SolverResult:
    """``chosen`` with the costs, iterations and trace steps of all ``results`` added up."""
    steps = [step.model_copy() for r in results for step in r.trace]
    for i, step in enumerate(steps, start=1):
        step.step = i
    return chosen.model_copy(
        update={
            "solver": f"{name}:{chosen.solver}",
            "trace": steps,
            "tried": [r.solver for r in results],
            "input_tokens": sum(r.input_tokens for r in results),
            "output_tokens": sum(r.output_tokens for r in results),
            "cached_tokens": sum(r.cached_tokens for r in results),
            "iterations": sum(r.iterations for r in results),
            "code_errors": sum(r.code_errors for r in results),
            "seconds": seconds,
        }
    )


class VotingSolver(_SolverGroup):
    """Run every solver and keep the answer with the most support across their runs.

    Each solver's final answer is scored by how many runs gave the same answer:
    all the sampled programs of a self-consistent solver count (its
    ``candidates``), and a single-run solver counts once. The best-supported
    real answer wins (ties: the earlier solver), and its provenance comes with
    it. Costs and traces add up over all solvers.

    Args:
        solvers: Solvers to run, the one to trust on ties first.
        name: Name reported in results.
    """

    def __init__(self, solvers: Sequence[Solver], *, name: str = "vote") -> None:
        """Store the members."""
        super().__init__(solvers, name=name)

    def solve(self, question: str | SolverContext, df: pd.DataFrame | None = None) -> SolverResult:
        """Answer ``question`` over ``df`` (or the tables of a :class:`SolverContext`)."""
        ctx = as_context(question, df)
        start = time.perf_counter()
        results = [solver.solve(ctx) for solver in self.solvers]
        support: Counter[str] = Counter()
        for res in results:
            runs = res.candidates or ([res.answer_items] if res.ok else [])
            support.update(answer_key(items) for items in runs if items)
        answered = [r for r in results if is_real_answer(r)]
        if not answered:
            chosen = results[0]
        else:
            chosen = max(answered, key=lambda r: support[answer_key(r.answer_items)])
        return merge_results(chosen, results, self.name, time.perf_counter() - start)
