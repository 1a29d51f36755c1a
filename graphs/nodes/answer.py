"""The ``answer`` node: the answer, its cited cells, a confidence, or an abstention."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime
from tablerag_agents.graphs.context import NOT_FOUND, Context
from tablerag_agents.graphs.nodes._common import ResourcesGetter, context_of
from tablerag_agents.graphs.nodes.retrieve import question_of
from tablerag_agents.graphs.result import REPLY_METADATA_KEY, GraphAnswer
from tablerag_agents.graphs.state import State
from tablerag_agents.prompts import load_prompt

from tablerag_agents.models.calls import call_model
from tablerag_agents.solve.normalize import answer_key

MAX_CITED = 20


def confidence(attempt: dict[str, Any]) -> float:
    """Share of the solver's sampled runs that agree with its answer (1.0 for one run).

    0.0 when the solver produced no value.
    """
    items = attempt.get("answer_items") or []
    if attempt.get("error") is not None or not items:
        return 0.0
    runs = [c for c in attempt.get("candidates") or [] if c]
    if not runs:
        return 1.0
    key = answer_key(items)
    return sum(answer_key(run) == key for run in runs) / len(runs)


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
    """The best solver attempt as the final answer and the reply message."""
    ctx = context_of(runtime)
    attempts = state.get("attempts") or []
    answered = [a for a in attempts if confidence(a) > 0]
    best = answered[-1] if answered else (attempts[-1] if attempts else {})
    score = confidence(best) if best else 0.0
    abstained = score == 0.0 or score < ctx.min_confidence
    cells = ((best.get("provenance") or {}).get("cells") or [])[:MAX_CITED]
    result = GraphAnswer(
        question=question_of(state),
        text=NOT_FOUND if abstained else best.get("answer", ""),
        items=[] if abstained else list(best.get("answer_items") or []),
        sentence="" if abstained else best.get("explanation", ""),
        cited_cells=[] if abstained else cells,
        confidence=round(score, 3),
        abstained=abstained,
        solver=best.get("solver", ""),
        error=best.get("error"),
        table_ids=list(state.get("table_ids") or []),
    )
    if not abstained and ctx.write_sentence and result.text:
        sentence = model_sentence(resources().chat_model, result.question, result.text)
        result.sentence = sentence or result.sentence
    if abstained:
        reply = f"The answer was {NOT_FOUND}."
        if best.get("answer") and score > 0:
            reply += f" (best guess {best['answer']!r}, confidence {score:.2f})"
    else:
        reply = result.sentence or result.text
    record = result.record()
    message = AIMessage(content=reply, response_metadata={REPLY_METADATA_KEY: record})
    return {"answer": record, "messages": [message]}
