"""How much a second opinion tells: agreement vs correctness in a `second_opinion=true` run.

Reads the records of `tablerag eval ... --set second_opinion=true` (dev split
only), finds each answer's second opinion (the checker's step, "second opinion:
..."), and prints how often the answer was right when the checker agreed,
disagreed or gave no value, how often the checker itself was right, the
accuracy-coverage of the confidence at a few thresholds, and, with
``--baseline`` (a default run on the same questions), the cost ratios:

    python bench/second_opinion.py \\
        bench/results/eval/dev/wtq-dev-graph-second_opinion=true-n40-seed1-at-e8b83e0.jsonl \\
        --baseline bench/results/eval/dev/wtq-dev-graph-n40-seed1-at-176b8de.jsonl

The result is saved as JSON (default: ``results/second_opinion.json``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from _results import add_output_args, result_path

from tablerag_agents.evaluation.metrics import fact_correct, normalize_fact_label, wtq_correct
from tablerag_agents.evaluation.records import read_records
from tablerag_agents.solve.checks import as_asked
from tablerag_agents.solve.confidence import same_answer
from tablerag_agents.solve.second_opinion import SECOND_OPINION

THRESHOLDS = (0.25, 0.5, 0.8)
DEFAULT_OUT = Path(__file__).parent / "results" / "second_opinion.json"


def reading_of(record: dict[str, Any]) -> list[str] | None:
    """The second opinion's items in ``record`` (None: no reading was asked; []: no value)."""
    for step in record.get("detail", {}).get("steps") or []:
        text = str(step.get("observation") or "")
        if text.startswith(SECOND_OPINION):
            return [i for i in text[len(SECOND_OPINION) :].split("|") if i.strip()]
    return None


def verdict(record: dict[str, Any], reading: list[str] | None, dataset: str = "wtq") -> str:
    """agree, disagree, no value, or none (no reading asked).

    A TabFact record keeps the verdict as a label ("1"/"0"), so both sides are
    compared as labels there.
    """
    if reading is None:
        return "none"
    if not reading or not record.get("answer"):
        return "no value"
    if dataset == "tabfact":
        same = normalize_fact_label(record["answer"]) == normalize_fact_label(reading)
    else:
        same = same_answer(record["answer"], reading, record["question"])
    return "agree" if same else "disagree"


def coverage(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Share of questions at or above each threshold, and their accuracy."""
    rows = []
    for t in THRESHOLDS:
        kept = [r for r in records if (r.get("detail", {}).get("confidence") or 0) >= t]
        right = sum(bool(r["correct"]) for r in kept)
        rows.append(
            {
                "threshold": t,
                "coverage": round(len(kept) / len(records), 3),
                "accuracy": round(right / len(kept), 3) if kept else None,
            }
        )
    return rows


def analyse(records: list[dict[str, Any]], dataset: str) -> dict[str, Any]:
    """The counts behind the page (see the module docstring)."""
    correct = fact_correct if dataset == "tabfact" else wtq_correct
    classes: dict[str, dict[str, int]] = {}
    checker_right = 0
    for record in records:
        reading = reading_of(record)
        kind = verdict(record, reading, dataset)
        tally = classes.setdefault(kind, {"questions": 0, "answer_right": 0, "checker_right": 0})
        tally["questions"] += 1
        tally["answer_right"] += bool(record["correct"])
        if reading:
            hit = correct(as_asked(reading, record["question"]), record["gold"])
            tally["checker_right"] += hit
            checker_right += hit
    return {
        "questions": len(records),
        "answer_right": sum(bool(r["correct"]) for r in records),
        "checker_right": checker_right,
        "by_agreement": classes,
        "confidence_coverage": coverage(records),
    }


def costs(records: list[dict[str, Any]], baseline: list[dict[str, Any]]) -> dict[str, Any]:
    """Median prompt tokens and seconds on the questions both runs answered, and ratios."""
    base = {r["id"]: r for r in baseline}
    both = [r for r in records if r["id"] in base]
    if not both:
        return {"questions": 0}
    out: dict[str, Any] = {"questions": len(both)}
    for key in ("input_tokens", "seconds"):
        new = statistics.median(float(r[key]) for r in both)
        old = statistics.median(float(base[r["id"]][key]) for r in both)
        out[key] = {"median": round(new, 1), "baseline_median": round(old, 1)}
        out[key]["ratio"] = round(new / old, 2) if old else None
    out["baseline_coverage"] = coverage([base[r["id"]] for r in both])
    return out


def main(argv: list[str] | None = None) -> int:
    """Print and save the analysis."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path, help="records of a second_opinion=true dev run")
    parser.add_argument("--baseline", type=Path, help="records of a default run, same questions")
    add_output_args(parser, DEFAULT_OUT)
    args = parser.parse_args(argv)
    header, records = read_records(args.records)
    spec = header.get("spec", {})
    if spec.get("split") != "dev":
        print(f"{args.records}: split {spec.get('split')!r}; only dev runs", file=sys.stderr)
        return 2
    result = {"records": str(args.records), **analyse(records, str(spec.get("dataset")))}
    if args.baseline:
        result["costs"] = costs(records, read_records(args.baseline)[1])
        result["baseline"] = str(args.baseline)
    print(json.dumps(result, indent=2))
    out = result_path(DEFAULT_OUT, args.out, force=args.force)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"-> {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
