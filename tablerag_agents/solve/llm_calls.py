"""A solver run's record (trace steps, tokens, time) and assembly of its :class:`SolverResult`.

The model calls themselves are :func:`~tablerag_agents.models.calls.call_model` and
:func:`~tablerag_agents.models.sampling.sample_replies`.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langchain_core.runnables import Runnable

from tablerag_agents.models.calls import LLMReply, call_model
from tablerag_agents.prompts import load_prompt
from tablerag_agents.solve.answer import build_provenance, explain, join_items
from tablerag_agents.solve.base import SolverContext, SolverResult, TraceStep
from tablerag_agents.solve.parsing import parse_react
from tablerag_agents.solve.question_kind import asks_yes_no, yes_no_answer
from tablerag_agents.tables.typed_table import TypedTable

logger = logging.getLogger(__name__)

QUIET = "import warnings\nwarnings.filterwarnings('ignore')"
"""Sandbox set-up code: library warnings would crowd out results in observations."""

# numpy 2 reprs scalars as np.int64(3): show the model a plain 3.
_NUMPY_SCALAR = re.compile(r"\bnp\.(?:int|uint|float|bool|str)_?\w*\(([^()]*)\)")


def observation_text(result: Any, max_chars: int = 1200) -> str:
    """The text of a sandbox :class:`ExecResult` for the model, numpy reprs simplified."""
    return _NUMPY_SCALAR.sub(r"\1", result.observation(max_chars))


@dataclass
class RunRecorder:
    """Collect trace steps, tokens and wall time of one solver run."""

    solver: str
    context: SolverContext
    started: float = field(default_factory=time.perf_counter)
    steps: list[TraceStep] = field(default_factory=list)
    code_errors: int = 0
    views: dict[str, TypedTable] = field(default_factory=dict)
    """Typed views of the context's tables (by id) the code ran over, if any: cited
    cells found in them are mapped back to the original cells."""

    def add(self, reply: LLMReply | None, **fields: Any) -> TraceStep:
        """Append a trace step for ``reply`` (and the code it ran, via ``fields``)."""
        step = TraceStep(step=len(self.steps) + 1, **fields)
        if reply is not None:
            step.input_tokens = reply.input_tokens
            step.output_tokens = reply.output_tokens
            step.llm_seconds = reply.seconds
            step.cached_tokens = reply.cached_tokens
            step.raw = step.raw or reply.text
        if step.ok is False:
            self.code_errors += 1
        self.steps.append(step)
        return step

    def finish(
        self,
        items: list[str] | None,
        *,
        value: Any = None,
        code: str = "",
        evidence: Any = None,
        error: str | None = None,
        iterations: int | None = None,
        truncated: bool = False,
        explain_model: BaseChatModel | None = None,
    ) -> SolverResult:
        """Build the result: answer, explanation, provenance, totals.

        A question that asks yes or no gets ``"yes"``/``"no"``; any other value
        for it (a name, a count) is kept in the trace but reported as an error,
        so a fallback chain tries its next solver.
        """
        items = [i for i in (items or []) if i.strip()]
        if items and error is None and asks_yes_no(self.context.question):
            verdict = yes_no_answer(items, self.context.question)
            if verdict is None:
                error = f"the question asks yes or no, the answer was {join_items(items)!r}"
            else:
                items = [verdict]
        answer = join_items(items)
        provenance = build_provenance(
            value,
            items,
            self.context.tables,
            code=code,
            main_id=self.context.main_id,
            evidence=evidence,
            views=self.views,
        )
        if not items and error is None:
            error = "no answer produced"
        n_calls = len(self.steps)
        sentence = None
        if explain_model is not None and answer:
            prompt = load_prompt("answer_sentence").format(
                question=self.context.question, answer=answer.replace("|", ", ")
            )
            reply = call_model(explain_model, [HumanMessage(prompt)])
            self.add(reply, action="answer", thought="write the answer sentence")
            sentence = reply.text.strip().split("\n")[0]
        text = explain(answer, provenance, sentence)
        result = SolverResult(
            solver=self.solver,
            question=self.context.question,
            answer=answer,
            answer_items=items,
            explanation=text,
            provenance=provenance,
            trace=self.steps,
            input_tokens=sum(s.input_tokens for s in self.steps),
            output_tokens=sum(s.output_tokens for s in self.steps),
            cached_tokens=sum(s.cached_tokens for s in self.steps),
            iterations=iterations if iterations is not None else n_calls,
            error=error,
            code_errors=self.code_errors,
            truncated=truncated,
        )
        result.seconds = time.perf_counter() - self.started
        logger.debug("%s answered %r in %.1fs", self.solver, answer, result.seconds)
        return result


def answer_from_result(
    model: Runnable[Any, Any], recorder: RunRecorder, result_text: str
) -> list[str]:
    """Ask the model for the short answer when a code result is not answer-shaped."""
    prompt = load_prompt("answer_from_result").format(
        question=recorder.context.question, result=result_text
    )
    reply = call_model(model, [HumanMessage(prompt)])
    text = reply.text.strip()
    answer = parse_react(text).final_answer or (text.splitlines()[0] if text else "")
    answer = re.sub(r"^\W*answer\W*:\s*", "", answer, flags=re.I).strip().rstrip(".")
    recorder.add(reply, action="answer", thought="read the answer off the result")
    return [a.strip() for a in answer.split("|") if a.strip()]
