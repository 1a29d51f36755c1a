"""WTQ-style denotation match: predicted answer items against gold items, as sets.

The scorer of the QA benchmarks (WTQ, OTT-QA, generic JSONL). Values compare
under :mod:`tablerag_agents.solve.normalize` (numbers by value, dates by date,
text normalised); it lives here, beside the other scorers, because only an
evaluation holds gold answers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tablerag_agents.solve.normalize import NormalizedValue, normalize_value

_SPLIT = re.compile(r"\s*\|\s*|\s*;\s*|,\s+|\s+and\s+|\n+")


def split_answer(text: str) -> list[str]:
    """Split a free-text answer holding several items (``"A, B and C"``) into items.

    Commas only split when followed by a space, so ``"1,234"`` stays one number.
    """
    return [p.strip() for p in _SPLIT.split(str(text)) if p and p.strip()]


def _as_set(values: Sequence[object]) -> list[NormalizedValue]:
    out: list[NormalizedValue] = []
    for v in values:
        nv = normalize_value(v)
        if not any(nv.matches(o) and o.matches(nv) for o in out):
            out.append(nv)
    return out


def answers_match(predicted: str | Sequence[object], gold: Sequence[str]) -> bool:
    """Return True if the predicted answer(s) equal the gold answer(s) as sets.

    Args:
        predicted: One answer string or a list of answer items.
        gold: The gold answer items (WTQ's ``targetValue`` split on ``|``).
    """
    preds = [predicted] if isinstance(predicted, str) else list(predicted)
    golds = _as_set(gold)
    if not golds:
        return False
    if len(golds) > 1 and len(preds) == 1:
        preds = split_answer(str(preds[0]))
    pred_set = _as_set(preds)
    if len(pred_set) != len(golds):
        return False
    unused = list(golds)
    for p in pred_set:
        hit = next((g for g in unused if p.matches(g)), None)
        if hit is None:
            return False
        unused.remove(hit)
    return True
