"""The first node of a turn: find the question, start a new trace, rewrite follow-ups."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime
from tablerag_agents.graphs.context import Context
from tablerag_agents.graphs.nodes._common import (
    ResourcesGetter,
    ask,
    context_of,
    earlier_turns,
    progress,
    text_of,
)
from tablerag_agents.graphs.nodes.retrieve import large_tables, tables_without_search
from tablerag_agents.graphs.state import TRACE_RESET, State
from tablerag_agents.prompts import load_prompt

#: A rewrite longer than this many times the question is not a rewrite.
_MAX_GROWTH = 4
_TURNS_SHOWN = 3


def make_prepare(resources: ResourcesGetter) -> Any:
    """Build the ``prepare`` node."""

    def prepare(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Take this turn's question, reset the turn's fields, rewrite a follow-up."""
        ctx = context_of(runtime)
        messages = list(state.get("messages") or [])
        question = (state.get("question") or "").strip()
        update: dict[str, Any] = {
            "question": "",  # consumed: the next turn's question comes fresh
            "trace": TRACE_RESET,
            "schema_queries": [],
            "cell_queries": [],
            "retrieved": {},
            "sub_tables": {},
            "clarifications": "",
            "wiki": None,
            "attempts": [],
            "answer": {},
        }
        if question:
            update["messages"] = [HumanMessage(question)]
            history = messages
        else:
            humans = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
            if not humans:
                raise ValueError("no question: send `question` or a human message")
            question = text_of(messages[humans[-1]]).strip()
            history = messages[: humans[-1]]
        if not question:
            raise ValueError("the question is empty")
        standalone = question
        turns = earlier_turns(history)
        if turns and ctx.rewrite_followups:
            progress(runtime, "prepare", step="rewrite follow-up")
            shown = "\n".join(f"Q: {q}\nA: {a}" for q, a in turns[-_TURNS_SHOWN:])
            prompt = load_prompt("rewrite_question").format(history=shown, question=question)
            standalone = _clean_rewrite(ask(resources().chat_model, prompt), question)
        update["standalone_question"] = standalone
        previous = list(state.get("table_ids") or [])
        chosen = tables_without_search(state, ctx, resources)
        update["previous_tables"] = previous
        update["table_ids"] = chosen or []
        update["table_hits"] = []
        update["large_tables"] = large_tables(chosen, ctx, resources) if chosen else []
        return update

    return prepare


def _clean_rewrite(reply: str, question: str) -> str:
    """The rewritten question from a reply, or ``question`` if the reply is unusable."""
    for line in reply.strip().splitlines():
        text = line.strip().strip('"').strip()
        for prefix in ("Standalone question:", "Question:", "Rewritten question:"):
            if text.lower().startswith(prefix.lower()):
                text = text[len(prefix) :].strip().strip('"').strip()
        if text:
            return text if len(text) <= _MAX_GROWTH * len(question) + 80 else question
    return question
