"""Combine solvers: mixed self-consistency with execution checks.

``VotingSolver`` runs several solvers (by default k sampled SQL queries, k
sampled pandas functions and one reading of the table: Liu et al.'s mixed
self-consistency), drops every run whose answer fails the execution checks of
:mod:`tablerag_agents.solve.checks` (a failed program, no value, a count above
the row count, a name that is no cell, a non-answer to a yes/no question), and
keeps the answer most remaining runs agree on (compared after normalisation,
:func:`~tablerag_agents.solve.normalize.answer_key`). Trying solvers one after
another until one produces a value is the graph's job
(``Context.retry_solvers``), not a solver's.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from tablerag_agents.solve.answer import build_provenance, explain, join_items
from tablerag_agents.solve.base import Solver, SolverContext, SolverResult, Vote, as_context
from tablerag_agents.solve.checks import NO_VALUE, TableCells, as_asked, drop_reason, implausible
from tablerag_agents.solve.confidence import final_code, vote_confidence
from tablerag_agents.solve.normalize import answer_key

FAILED = f"{NO_VALUE} (the run failed, or its result was empty or not an answer)"
"""Why a run that gave no answer items did not vote."""


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


def member_votes(solver: Solver, result: SolverResult) -> list[Vote]:
    """One vote per run ``solver`` started: its sampled runs, or its one answer.

    Runs that produced no value (a failed program, an empty result) are votes
    with no items, so the vote knows how many runs it started.
    """
    runs = max(1, int(getattr(solver, "samples", 1)))
    if result.votes:
        votes = [v.model_copy() for v in result.votes]
    elif result.ok:
        code = final_code(result) or ""
        votes = [Vote(source=result.solver, items=result.answer_items, code=code)]
    else:
        votes = []
    return votes + [Vote(source=result.solver) for _ in range(runs - len(votes))]


def checked(votes: Sequence[Vote], question: str, cells: TableCells) -> list[Vote]:
    """The votes in the form the question asks for, each with its check's verdict."""
    out = []
    for vote in votes:
        reason = drop_reason(vote.items, vote.code, question, cells) if vote.items else FAILED
        items = as_asked(vote.items, question)
        out.append(vote.model_copy(update={"items": items, "dropped": reason}))
    return out


@dataclass
class _Tally:
    """The support of one normalised answer."""

    items: list[str]
    first: int
    """Position of its first vote (the solvers' order, the greedy run before samples)."""
    votes: int = 0
    programs: int = 0
    """Votes computed by a program (execution-backed)."""


def winner(votes: Sequence[Vote]) -> Vote | None:
    """The vote whose answer has the most support among ``votes`` (None if none answered).

    Ties go to the answer with more program-computed votes (execution-backed),
    then to the answer voted first in the solvers' order.
    """
    tallies: dict[str, _Tally] = {}
    for i, vote in enumerate(votes):
        if not vote.items:
            continue
        tally = tallies.setdefault(answer_key(vote.items), _Tally(vote.items, i))
        tally.votes += 1
        tally.programs += bool(vote.code)
    if not tallies:
        return None
    best = max(tallies.values(), key=lambda t: (t.votes, t.programs, -t.first))
    return votes[best.first]


class VotingSolver:
    """Run every solver, check every run's answer, and keep the best-supported one.

    Every run a member started is one vote: all the sampled programs of a
    self-consistent solver (``samples``), or the one answer of a single-run
    solver. Runs that failed, gave no value or an implausible one are dropped
    (:func:`~tablerag_agents.solve.checks.drop_reason`); the answer with the
    most valid votes wins (:func:`winner` breaks ties). When no run is valid,
    the answer most runs gave anyway is returned with confidence 0.

    The result carries every vote (``votes``, with why a dropped one was left
    out) and its ``confidence``
    (:func:`~tablerag_agents.solve.confidence.vote_confidence`). Its provenance
    comes from the first member whose own answer is the winner (programs
    before the reading), else from the cells that hold the winning items.
    Costs and traces add up over all members.

    Args:
        solvers: Solvers to run, in the order ties are settled.
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
        cells = TableCells(ctx.tables)
        votes = checked(
            [v for s, r in zip(self.solvers, results, strict=True) for v in member_votes(s, r)],
            ctx.question,
            cells,
        )
        best = winner([v for v in votes if v.dropped is None])
        if best is None:  # nothing passed the checks: the most common answer, unvouched
            best = winner([v for v in votes if implausible(v.dropped)])
        if best is None:
            chosen = results[0]
        else:
            chosen = self._result_for(best, results, ctx)
        merged = merge_results(chosen, results, self.name, time.perf_counter() - start)
        merged.votes = votes
        merged.confidence = vote_confidence(votes, merged.answer_items) if merged.ok else 0.0
        return merged

    @staticmethod
    def _result_for(best: Vote, results: list[SolverResult], ctx: SolverContext) -> SolverResult:
        """The result of the first member that answered ``best``, or one built for it."""
        key = answer_key(best.items)
        for res in results:
            if res.ok and answer_key(as_asked(res.answer_items, ctx.question)) == key:
                return res
        provenance = build_provenance(
            None, best.items, ctx.tables, code=best.code, main_id=ctx.main_id
        )
        answer = join_items(best.items)
        return SolverResult(
            solver=best.source,
            question=ctx.question,
            answer=answer,
            answer_items=list(best.items),
            explanation=explain(answer, provenance),
            provenance=provenance,
        )
