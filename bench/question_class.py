"""Write the ids of one class of questions on one side of the split, for `tablerag eval --ids`.

A class is a shape of question the solvers treat apart (see
``tablerag_agents/solve/question_kind.py``): ``choice`` questions open like a
yes/no question but offer options ("are there more players from sweden or
canada?"); ``yes_no`` questions want a verdict. The ids come in the split's
seeded order, so the first N of a class are the same on every machine:

    python bench/question_class.py --dataset wtq --data ../shared/data/wtq --split dev \\
        --kind choice --n 24 --out bench/results/eval/dev/wtq-dev-choice24.txt
    tablerag eval --dataset wtq --data ../shared/data/wtq --split dev \\
        --ids bench/results/eval/dev/wtq-dev-choice24.txt --method graph --workers 2

The question is read as the harness asks it (a TabFact statement becomes a
yes/no question). The list is written as text (one id per line, a ``#``
header) and the counts are printed.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from _results import add_output_args, result_path

from tablerag_agents.evaluation.loaders import load_dataset
from tablerag_agents.evaluation.methods import task_question
from tablerag_agents.evaluation.splits import split_examples
from tablerag_agents.solve.question_kind import asks_choice, asks_yes_no

KINDS: dict[str, Callable[[str], bool]] = {"choice": asks_choice, "yes_no": asks_yes_no}
"""Class name -> the test a question of the class passes."""


def class_ids(dataset: str, data: Path, split: str, kind: str, n: int, seed: int) -> list[str]:
    """The first ``n`` ids of class ``kind`` in the seeded order of one side."""
    side = split_examples(load_dataset(dataset, data), split, None, seed)  # type: ignore[arg-type]
    test = KINDS[kind]
    return [e.id for e in side if test(task_question(e))][:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="wtq", help="loader name, as for tablerag eval")
    parser.add_argument("--data", type=Path, required=True, help="the dataset's folder or file")
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--kind", choices=sorted(KINDS), required=True)
    parser.add_argument("--n", type=int, default=24, help="ids to keep (the first in order)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the side's order")
    default = Path(__file__).parent / "results" / "eval" / "dev" / "question-class.txt"
    add_output_args(parser, default)
    args = parser.parse_args()
    ids = class_ids(args.dataset, args.data, args.split, args.kind, args.n, args.seed)
    if not ids:
        raise SystemExit(f"no {args.kind} question on the {args.split} side")
    out = result_path(default, args.out, force=args.force)
    header = (
        f"# {args.kind} questions of {args.dataset} {args.split}: the first {len(ids)} "
        f"in seed-{args.seed} order (bench/question_class.py)\n"
    )
    out.write_text(header + "\n".join(ids) + "\n", encoding="utf-8")
    print(f"{len(ids)} {args.kind} question id(s) of {args.dataset} {args.split} -> {out}")


if __name__ == "__main__":
    main()
