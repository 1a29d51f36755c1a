"""The records the evaluation harness passes around: examples in, predictions out.

Loaders (:mod:`tablerag_agents.evaluation.loaders`) turn a dataset's native
files into :class:`EvalExample` s; methods (:mod:`tablerag_agents.evaluation.methods`)
turn an example into a :class:`Prediction`; the runner scores predictions with
:mod:`tablerag_agents.evaluation.metrics` and writes them as JSON lines.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from tablerag_agents.tables import Table

Task = Literal["qa", "fact", "freeform"]
"""``qa``: short answer items (WTQ, OTT-QA, generic JSONL); ``fact``: a statement
to verify, gold ``["1"]`` (entailed) or ``["0"]`` (refuted) (TabFact);
``freeform``: a sentence answer scored with BLEU/ROUGE-L (FeTaQA)."""


@dataclass(frozen=True)
class EvalExample:
    """One benchmark question, its gold answers and a lazy way to get its table(s).

    Attributes:
        id: The dataset's own id of the question (stable across runs).
        dataset: Dataset name (``wtq``, ``tabfact``, ``ottqa``, ``fetaqa``, ``jsonl``).
        task: How it is answered and scored (see :data:`Task`).
        question: The question (for ``fact``: the statement).
        answers: Gold answer items.
        table_id: Id of the gold table.
        load_tables: Returns the table(s) the question is asked over; called
            only when a method needs them (reading is lazy, tables can be big).
        caption: Title of the gold table, when the dataset has one.
        meta: Anything else the dataset gives (section title, gold cells...).
    """

    id: str
    dataset: str
    task: Task
    question: str
    answers: list[str]
    table_id: str
    load_tables: Callable[[], list[Table]] = field(repr=False, compare=False)
    caption: str = ""
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Prediction:
    """What one method produced for one example (before scoring).

    Attributes:
        answer: Short answer items (for ``fact`` tasks ``["1"]`` or ``["0"]``);
            empty when the method produced no value.
        sentence: A sentence answer (``freeform`` tasks), else "".
        error: True when the method raised or its code failed at least once on
            the way, whatever its final answer (the exception rate counts these).
        error_message: The last error, for the report.
        input_tokens: Prompt tokens over every model call.
        output_tokens: Completion tokens over every model call.
        seconds: Wall-clock seconds for this example.
        retrieved_ids: Ranked table ids, for methods that retrieve (HITS@k).
        detail: Method-specific extras (solver name, code, cited cells...).
    """

    answer: list[str] = field(default_factory=list)
    sentence: str = ""
    error: bool = False
    error_message: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0
    retrieved_ids: list[str] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)
