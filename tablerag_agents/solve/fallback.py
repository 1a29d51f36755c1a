"""Try solvers in order until one gives a real answer (SQL, then Python, then reading)."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

import pandas as pd

from tablerag_agents.solve.base import Solver, SolverContext, SolverResult, as_context
from tablerag_agents.solve.grounding import looks_empty

logger = logging.getLogger(__name__)


def is_real_answer(result: SolverResult) -> bool:
    """True if ``result`` has an answer that is not empty, ``None``, NaN or 0.

    A 0 or an empty list is what a filter matching nothing gives, so it is the
    typical silent failure of model-written code.
    """
    if not result.ok:
        return False
    items = result.answer_items
    return not (len(items) == 1 and looks_empty(items[0])) and not all(
        looks_empty(i) for i in items
    )


class FallbackSolver:
    """Run ``solvers`` in order and return the first real answer.

    A later solver runs only when the earlier ones failed, returned nothing, or
    returned an empty/0 value. If no solver gives a real answer, the first one
    that answered at all (even 0) wins; if none answered, the last failure is
    returned. Tokens, seconds and iterations add up over every solver that ran,
    and the trace holds all of their steps.

    Args:
        solvers: Solvers to try, most precise first (e.g. SQL, process_df, ReadTable).
        name: Name reported in results.
    """

    def __init__(self, solvers: Sequence[Solver], *, name: str = "fallback") -> None:
        """Store the chain."""
        if not solvers:
            raise ValueError("FallbackSolver needs at least one solver")
        self.solvers = list(solvers)
        self.name = name

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
            chosen = next((r for r in results if r.ok), results[-1])
        steps = [step for r in results for step in r.trace]
        for i, step in enumerate(steps, start=1):
            step.step = i
        return chosen.model_copy(
            update={
                "solver": f"{self.name}:{chosen.solver}",
                "trace": steps,
                "tried": [r.solver for r in results],
                "input_tokens": sum(r.input_tokens for r in results),
                "output_tokens": sum(r.output_tokens for r in results),
                "cached_tokens": sum(r.cached_tokens for r in results),
                "iterations": sum(r.iterations for r in results),
                "code_errors": sum(r.code_errors for r in results),
                "seconds": time.perf_counter() - start,
            }
        )
