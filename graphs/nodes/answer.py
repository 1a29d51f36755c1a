"""The ``answer`` node: the answer, its cited cells, a confidence, or an abstention."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime
from tablerag_agents.graphs.context import LOW_CONFIDENCE, NOT_FOUND, Context
from tablerag_agents.graphs.nodes._common import ResourcesGetter, context_of
from tablerag_agents.graphs.nodes.retrieve import question_of
from tablerag_agents.graphs.result import REPLY_METADATA_KEY, GraphAnswer
from tablerag_agents.graphs.state import State
from tablerag_agents.prompts import load_prompt

from tablerag_agents.models.calls import call_model

MAX_CITED = 20


def has_value(attempt: dict[str, Any]) -> bool:
    """True if a solver attempt produced answer items without an error (a 0 is a value)."""
    return attempt.get("error") is None and bool(attempt.get("answer_items"))


def confidence(attempt: dict[str, Any]) -> float:
    """The confidence the ``solve`` node gave an attempt; 0.0 when it produced no value."""
    if not has_value(attempt):
        return 0.0
    return float(attempt.get("confidence") or 0.0)


def model_sentence(model: Any, question: str, answer_text: str) -> str:
    """One sentence that answers ``question`` with ``answer_text``, written by ``model``."""
    prompt = load_prompt("answer_sentence").format(
        question=question, answer=answer_text.replace("|", ", ")
    )
    reply = call_model(model, [HumanMessage(prompt)])
    return reply.text.strip().split("\n")[0].strip()


def make_answer(resources: ResourcesGetter) -> Any:
    """Build the ``answer`` node."""

    def answer(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Turn the best solver attempt into the final answer and the reply message."""
        return final_answer(state, runtime, resources)

    return answer


def final_answer(
    state: State, runtime: Runtime[Context], resources: ResourcesGetter
) -> dict[str, Any]:
    """The best solver attempt as the final answer and the reply message.

    An answer whose confidence is below ``min_confidence`` is flagged
    (``low_confidence``), or withheld when ``low_confidence="abstain"``: its text
    then says so (:data:`LOW_CONFIDENCE`) and ``best_guess`` keeps it.
    """
    ctx = context_of(runtime)
    attempts = state.get("attempts") or []
    answered = [a for a in attempts if has_value(a)]
    best = answered[-1] if answered else (attempts[-1] if attempts else {})
    score = confidence(best) if best else 0.0
    low = bool(answered) and score < ctx.min_confidence
    withheld = low and ctx.low_confidence == "abstain"
    abstained = not answered or withheld
    cells = ((best.get("provenance") or {}).get("cells") or [])[:MAX_CITED]
    result = GraphAnswer(
        question=question_of(state),
        text=(LOW_CONFIDENCE if withheld else NOT_FOUND) if abstained else best["answer"],
        items=[] if abstained else list(best["answer_items"]),
        sentence="" if abstained else best.get("explanation", ""),
        cited_cells=[] if abstained else cells,
        chart=None if abstained else best.get("chart"),
        confidence=round(score, 3),
        abstained=abstained,
        low_confidence=low,
        best_guess=best["answer"] if withheld else "",
        solver=best.get("solver", ""),
        error=best.get("error"),
        table_ids=list(state.get("table_ids") or []),
    )
    if not abstained and ctx.write_sentence and result.text:
        sentence = model_sentence(resources().chat_model, result.question, result.text)
        result.sentence = sentence or result.sentence
    record = result.record()
    message = AIMessage(
        content=reply_text(result, ctx.min_confidence),
        response_metadata={REPLY_METADATA_KEY: record},
    )
    return {"answer": record, "messages": [message]}


def reply_text(result: GraphAnswer, min_confidence: float) -> str:
    """The reply message: the answer, or why there is none, with a low confidence said."""
    score = result.confidence
    if result.low_confidence and result.abstained:
        return (
            f"Not confident enough to answer: confidence {score:.2f} is below the minimum "
            f"{min_confidence:.2f} (best guess {result.best_guess!r})."
        )
    if result.abstained:
        return f"The answer was {NOT_FOUND}."
    reply = result.sentence or result.text
    if result.low_confidence:
        reply += (
            f" (Low confidence: {score:.2f}, below the minimum {min_confidence:.2f}; "
            "check the cited cells.)"
        )
    return reply
