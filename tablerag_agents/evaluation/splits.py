"""Honest dev/test splits: disjoint by construction, fixed seeded samples inside each.

The rule:

1. **Side.** Every example goes to ``dev`` or ``test`` by a stable hash of its
   *table id*: ``sha256("tablerag-split-v1:" + table_id)``; the first 8 bytes as
   an integer below ``DEV_FRACTION * 2**64`` mean ``dev``, else ``test``. The
   side depends on nothing else (not the seed, ``n``, file order or the other
   examples), so a dev sample and a test sample can never share a question,
   whatever seeds and sizes are used. Hashing the table rather than the question
   keeps every question about one table on one side: tuning never sees a test
   table (datasets with one table per question, e.g. FeTaQA, split by question).
2. **Sample.** Inside a side, examples are ranked by ``sha256(f"{seed}:{id}")``
   and the first ``n`` are taken, in that order. The same arguments always give
   the same list; a larger ``n`` extends a smaller one (n=50 is a prefix of
   n=100 for one seed); excluding ids does not reorder the others.
3. **Exclusion.** ``exclude`` removes ids before sampling (e.g. questions already
   looked at while developing), so a fresh sample avoids them.
4. **A given list.** :func:`pick_examples` takes the questions a list names (a
   class of questions picked by a script), in the list's order, and refuses an
   id of the other side: a list never smuggles a test question into tuning.

The split is fixed per dataset: WTQ has no official dev set in our data
(``training.tsv`` only), so both sides are drawn from its training questions.
OTT-QA and FeTaQA are split the same way inside their dev files; TabFact inside
its validation file. Changing ``DEV_FRACTION`` or the salt changes every split:
don't.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Literal

from tablerag_agents.evaluation.types import EvalExample

Split = Literal["dev", "test"]

#: Share of tables on the dev side.
DEV_FRACTION = 0.5
_SALT = "tablerag-split-v1:"

__all__ = ["DEV_FRACTION", "Split", "pick_examples", "read_ids", "split_examples", "split_of"]


def _hash64(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def _check_split(split: str) -> None:
    if split not in ("dev", "test"):
        raise ValueError(f"split must be 'dev' or 'test', not {split!r}")


def split_of(table_id: str) -> Split:
    """The side (``dev`` or ``test``) of every question about ``table_id``."""
    return "dev" if _hash64(_SALT + table_id) < int(DEV_FRACTION * 2**64) else "test"


def split_examples(
    examples: Sequence[EvalExample],
    split: Split,
    n: int | None,
    seed: int = 0,
    *,
    exclude: Iterable[str] = (),
) -> list[EvalExample]:
    """A fixed seeded sample of ``n`` examples from one side of the split.

    Args:
        examples: All examples of one dataset (ids unique).
        split: ``"dev"`` (for tuning) or ``"test"`` (reported once).
        n: Sample size; ``None`` takes the whole side (in the seeded order).
        seed: Sample seed (does not move examples between sides).
        exclude: Example ids to leave out (e.g. ids seen in earlier runs).

    Returns:
        ``n`` examples in a stable order (see the module docstring).

    Raises:
        ValueError: For an unknown split, a negative ``n``, duplicate ids, or
            an ``n`` larger than the side holds after exclusions.
    """
    _check_split(split)
    if n is not None and n < 0:
        raise ValueError(f"n must be >= 0, not {n}")
    seen: set[str] = set()
    for e in examples:
        if e.id in seen:
            raise ValueError(f"example ids must be unique to split them; {e.id!r} repeats")
        seen.add(e.id)
    banned = set(exclude)
    side = [e for e in examples if split_of(e.table_id) == split]
    pool = [e for e in side if e.id not in banned]
    if n is not None and n > len(pool):
        name = examples[0].dataset if examples else "the dataset"
        excluded = len(side) - len(pool)
        note = f" after excluding {excluded} id(s)" if excluded else ""
        raise ValueError(
            f"asked for {n} examples from the {split} split of {name}, "
            f"which holds only {len(pool)}{note} (of {len(examples)} in all)"
        )
    pool.sort(key=lambda e: (_hash64(f"{seed}:{e.id}"), e.id))
    return pool if n is None else pool[:n]


def pick_examples(
    examples: Sequence[EvalExample], split: Split, ids: Sequence[str]
) -> list[EvalExample]:
    """The examples ``ids`` names, in that order, all from the ``split`` side.

    Raises:
        ValueError: For an empty or repeating list, an id the dataset lacks, or
            an id on the other side of the split.
    """
    _check_split(split)
    if not ids:
        raise ValueError("the id list is empty")
    repeated = sorted(i for i, count in Counter(ids).items() if count > 1)
    if repeated:
        raise ValueError(f"the id list repeats {', '.join(repeated[:5])}")
    by_id = {e.id: e for e in examples}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise ValueError(f"{len(missing)} id(s) are not in the dataset: {', '.join(missing[:5])}")
    other = [i for i in ids if split_of(by_id[i].table_id) != split]
    if other:
        raise ValueError(
            f"{len(other)} id(s) are not on the {split} side of the split: {', '.join(other[:5])}"
        )
    return [by_id[i] for i in ids]


def read_ids(text: str) -> list[str]:
    """The ids of an id-list file: one per line; blank lines and ``#`` comments skipped."""
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return [line for line in lines if line]
