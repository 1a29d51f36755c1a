"""Combine solvers: a vote over their answers.

``VotingSolver`` runs several solvers and keeps the answer most of their runs
agree on (mixed self-consistency: code and reading vote together). Trying
solvers one after another until one produces a value is the graph's job
(``Context.retry_solvers``), not a solver's.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

import pandas as pd

from tablerag_agents.solve.base import Solver, SolverContext, SolverResult, as_context
from tablerag_agents.solve.normalize import answer_key


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


class VotingSolver:
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
        """Store the members (at least one)."""
        if not solvers:
            raise ValueError("VotingSolver needs at least one solver")
        self.solvers = list(solvers)
        self.name = name

    def solve(self, question: str | SolverContext, df: pd.DataFrame | None = None) -> SolverResult:
        """Answer ``question`` over ``df`` (or the tables of a :class:`SolverContext`)."""
        ctx = as_context(question, df)
        start = time.perf_counter()
        results = [solver.solve(ctx) for solver in self.solvers]
        support: Counter[str] = Counter()
        for res in results:
            runs = res.candidates or ([res.answer_items] if res.ok else [])
            support.update(answer_key(items) for items in runs if items)
        answered = [r for r in results if r.ok]
        if not answered:
            chosen = results[0]
        else:
            chosen = max(answered, key=lambda r: support[answer_key(r.answer_items)])
        return merge_results(chosen, results, self.name, time.perf_counter() - start)
