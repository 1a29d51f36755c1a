"""bench/second_opinion.py: agreement classes, the reading's own score, the cost ratios."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))
import second_opinion  # noqa: E402


def _record(qid: str, answer: list[str], gold: list[str], reading: str | None, **extra: Any):
    steps = [{"action": "sql", "code": "SELECT 1", "ok": True, "observation": "1"}]
    if reading is not None:
        steps.append({"action": "answer", "ok": None, "observation": f"second opinion: {reading}"})
    correct = second_opinion.wtq_correct(answer, gold)
    return {
        "id": qid,
        "question": extra.pop("question", "how many?"),
        "answer": answer,
        "gold": gold,
        "correct": correct,
        "input_tokens": extra.pop("tokens", 100),
        "seconds": extra.pop("seconds", 10.0),
        "detail": {"steps": steps, "confidence": extra.pop("confidence", 0.5)},
    }


RECORDS = [
    _record("a", ["3"], ["3"], "3.0", confidence=0.8, tokens=300),
    _record("b", ["4"], ["5"], "5", confidence=0.3, tokens=300),
    _record("c", ["2"], ["2"], "", confidence=0.5, tokens=300),
    _record("d", ["yes"], ["yes"], "Yes", question="did they win?", confidence=0.8),
    _record("e", ["x"], ["y"], None, confidence=0.175),
]


def test_answers_are_classed_by_what_the_reading_said() -> None:
    result = second_opinion.analyse(RECORDS, "wtq")
    by = result["by_agreement"]
    assert by["agree"] == {"questions": 2, "answer_right": 2, "checker_right": 2}
    assert by["disagree"] == {"questions": 1, "answer_right": 0, "checker_right": 1}
    assert by["no value"]["questions"] == 1 and by["none"]["questions"] == 1
    assert (result["answer_right"], result["checker_right"]) == (3, 3)
    top = next(r for r in result["confidence_coverage"] if r["threshold"] == 0.8)
    assert top == {"threshold": 0.8, "coverage": 0.4, "accuracy": 1.0}


def test_costs_compare_medians_on_the_shared_questions() -> None:
    baseline = [_record(r["id"], r["answer"], r["gold"], None, tokens=100) for r in RECORDS[:3]]
    costs = second_opinion.costs(RECORDS, baseline)
    assert costs["questions"] == 3 and costs["input_tokens"]["ratio"] == 3.0


def test_tabfact_verdicts_are_compared_as_labels() -> None:
    records = [
        _record("t1", ["1"], ["1"], "yes", question="is it true? answer yes or no"),
        _record("t2", ["0"], ["1"], "yes", question="is it true? answer yes or no"),
    ]
    for r in records:
        r["correct"] = r["answer"] == r["gold"]
    by = second_opinion.analyse(records, "tabfact")["by_agreement"]
    assert by["agree"] == {"questions": 1, "answer_right": 1, "checker_right": 1}
    assert by["disagree"] == {"questions": 1, "answer_right": 0, "checker_right": 1}
