"""Accuracy against coverage: how right the answers are that a confidence threshold keeps.

For a threshold t, the answers kept are those with confidence >= t (the graph
flags or withholds the others, ``Context.min_confidence``); **coverage** is
their share of all the run's questions and **accuracy** the share of them that
is right. Lowering t from the highest confidence to 0 traces the curve a user
moves along when choosing ``min_confidence``. A question with no answer (no
value, or one withheld by the run's own ``low_confidence=abstain``) is never
kept: measure the curve on a run that withholds nothing (the default
``low_confidence=flag``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CoveragePoint:
    """The answers kept at one confidence threshold."""

    threshold: float
    kept: int
    """Answers with confidence >= ``threshold``."""
    right: int
    """Of those, the right ones."""
    questions: int
    """All questions of the run."""

    @property
    def coverage(self) -> float:
        """Share of the questions answered at this threshold."""
        return self.kept / self.questions if self.questions else 0.0

    @property
    def accuracy(self) -> float | None:
        """Share of the kept answers that are right (None when none is kept)."""
        return self.right / self.kept if self.kept else None


def record_confidence(record: Mapping[str, Any]) -> float | None:
    """The confidence a records line stores (``detail.confidence``), or None."""
    value = (record.get("detail") or {}).get("confidence")
    return None if value is None else float(value)


def _answered(record: Mapping[str, Any]) -> bool:
    return bool(record.get("answer")) and not (record.get("detail") or {}).get("abstained")


def _scored(records: Iterable[Mapping[str, Any]]) -> list[tuple[float | None, bool, bool]]:
    """``(confidence, answered, right)`` of each record scored for accuracy."""
    return [
        (record_confidence(r), _answered(r), bool(r["correct"]))
        for r in records
        if r.get("correct") is not None
    ]


def has_confidences(records: Sequence[Mapping[str, Any]]) -> bool:
    """True if some answered, accuracy-scored record carries a confidence."""
    return any(c is not None and answered for c, answered, _ in _scored(records))


def point_at(records: Sequence[Mapping[str, Any]], threshold: float) -> CoveragePoint:
    """The answers with confidence >= ``threshold`` (no confidence counts as 0)."""
    scored = _scored(records)
    kept = [right for c, answered, right in scored if answered and (c or 0.0) >= threshold]
    return CoveragePoint(threshold, len(kept), sum(kept), len(scored))


def coverage_curve(records: Sequence[Mapping[str, Any]]) -> list[CoveragePoint]:
    """One point per distinct confidence of the answers, highest threshold first.

    Empty when no answered record carries a confidence.
    """
    if not has_confidences(records):
        return []
    levels = {c or 0.0 for c, answered, _ in _scored(records) if answered}
    return [point_at(records, t) for t in sorted(levels, reverse=True)]


def best_point(curve: Sequence[CoveragePoint], min_accuracy: float) -> CoveragePoint | None:
    """The widest-covering point whose accuracy is at least ``min_accuracy``."""
    good = [p for p in curve if p.accuracy is not None and p.accuracy >= min_accuracy]
    return max(good, key=lambda p: (p.coverage, p.threshold)) if good else None
