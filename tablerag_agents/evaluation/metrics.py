"""Accuracy and run statistics for table-QA solvers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import mean

from tablerag_agents.solve.normalize import answers_match


def exact_match(predicted: str | Sequence[object] | None, gold: Sequence[str]) -> bool:
    """Return True if ``predicted`` equals ``gold`` under the answer normaliser."""
    if predicted is None:
        return False
    if not isinstance(predicted, str) and len(predicted) == 0:
        return False
    return answers_match(predicted, gold)


def accuracy(
    predictions: Sequence[str | Sequence[object] | None], golds: Sequence[Sequence[str]]
) -> float:
    """Return the fraction of predictions matching their gold answers."""
    if len(predictions) != len(golds):
        raise ValueError(f"{len(predictions)} predictions for {len(golds)} gold answers")
    if not golds:
        return 0.0
    return sum(exact_match(p, g) for p, g in zip(predictions, golds, strict=True)) / len(golds)


@dataclass(frozen=True)
class RunRecord:
    """What one solver did on one question (the input of :func:`summarize`)."""

    correct: bool
    error: bool
    iterations: int
    input_tokens: int
    output_tokens: int
    seconds: float


@dataclass(frozen=True)
class RunSummary:
    """Aggregate statistics of one solver over a question set."""

    n: int
    accuracy: float
    exception_rate: float
    mean_iterations: float
    mean_input_tokens: float
    mean_output_tokens: float
    seconds_per_question: float

    def as_dict(self) -> dict[str, float | int]:
        """Return the summary as a plain JSON-able dict."""
        return dict(self.__dict__)


def summarize(records: Iterable[RunRecord]) -> RunSummary:
    """Aggregate run records: accuracy, exception rate, means per question."""
    recs = list(records)
    if not recs:
        return RunSummary(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    return RunSummary(
        n=len(recs),
        accuracy=mean(r.correct for r in recs),
        exception_rate=mean(r.error for r in recs),
        mean_iterations=mean(r.iterations for r in recs),
        mean_input_tokens=mean(r.input_tokens for r in recs),
        mean_output_tokens=mean(r.output_tokens for r in recs),
        seconds_per_question=mean(r.seconds for r in recs),
    )
