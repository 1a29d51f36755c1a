"""The two PyReAct loops: text ReAct (lenient parsing) and native tool calls.

Both keep the message history append-only, so a prompt-prefix cache on the
model server turns every step into "process only the new tokens".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from tablerag_agents.models.calls import LLMReply, call_model
from tablerag_agents.prompts import load_prompt
from tablerag_agents.sandbox import ExecResult
from tablerag_agents.solve.answer import value_to_items
from tablerag_agents.solve.base import SolverResult
from tablerag_agents.solve.grounding import literal_hint, looks_empty
from tablerag_agents.solve.hints import error_hint
from tablerag_agents.solve.llm_calls import RunRecorder, observation_text
from tablerag_agents.solve.parsing import (
    clean_answer,
    parse_react,
    strip_observation,
    with_result_expression,
)
from tablerag_agents.solve.quoting import fix_python_apostrophes

if TYPE_CHECKING:
    from tablerag_agents.solve.pyreact import PyReActSolver

STOP = ["Observation:", "\nObservation"]
"""Stop sequences: the model must not write the observation itself."""

PYTHON_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "python",
        "description": (
            "Run Python code over the table DataFrame `df` (pandas is `pd`); variables "
            "persist between calls and the value of the last line is returned."
        ),
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string", "description": "Python code to run."}},
            "required": ["code"],
        },
    },
}


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1].strip() if lines else "error"


def split_final(text: str) -> list[str]:
    """Answer items of a final answer (``|``-separated)."""
    return [p.strip() for p in text.split("|") if p.strip()]


def choose_answer(final: str | None, value: Any) -> list[str]:
    """Pick the answer items from the model's final answer and the last code value.

    The model's own final answer wins, except when it is a sentence that merely
    contains the value the code produced: then the value (clean) is used. With
    no final answer, an answer-shaped last value is used.
    """
    value_items = value_to_items(value) if value is not None else None
    if not final:
        return value_items or []
    if value_items and len(final.split()) > 5:
        lowered = final.lower()
        if all(item.lower() in lowered for item in value_items):
            return value_items
    return split_final(final)


class ReactLoop:
    """State of one question's ReAct loop."""

    def __init__(
        self,
        solver: PyReActSolver,
        session: Any,
        rec: RunRecorder,
        tables: Mapping[str, pd.DataFrame] | None = None,
    ) -> None:
        self.solver = solver
        self.session = session
        self.rec = rec
        self.tables = dict(tables or {})
        self.columns = [str(c) for frame in self.tables.values() for c in frame.columns]
        self.history = ""
        """All code run so far in the session (for hints about defined names)."""
        self.last_value: Any = None
        self.last_code = ""
        self.evidence: Any = None
        self.iterations = 0
        self.failed: dict[str, str] = {}
        """Code that raised -> its error line."""
        self.empty_hint = False
        """The last action gave an empty/0 value that a mismatched literal explains."""

    def execute(self, code: str) -> tuple[ExecResult, str]:
        """Run one action; remember its value when it succeeded."""
        code = fix_python_apostrophes(code) or code
        self.iterations += 1
        result = self.session.run(with_result_expression(code), timeout=self.solver.exec_timeout_s)
        obs = observation_text(result, self.solver.max_observation_chars)
        self.history += "\n" + code
        hint = None
        if not result.ok:
            hint = error_hint(result.error or obs, self.history, self.columns)
        empty = result.ok and result.value is not None and looks_empty(result.value)
        grounding = None
        if not result.ok or empty:
            # A filter that matched nothing shows up as an error or an empty/0 value.
            grounding = literal_hint(code, self.tables, "python")
            hint = "\n".join(h for h in (hint, grounding) if h) or None
        self.empty_hint = empty and grounding is not None
        if hint:
            obs = f"{obs}\n{hint}"
        if not result.ok:
            self.failed[code.strip()] = _last_line(result.error or obs) + (
                f" ({hint})" if hint else ""
            )
        if result.ok and result.value is not None:
            if isinstance(self.last_value, pd.DataFrame | pd.Series):
                self.evidence = self.last_value  # rows a later aggregate may have used
            self.last_value = result.value
            self.last_code = code
        return result, obs

    def finish(self, final: str | None, error: str | None = None) -> SolverResult:
        items = choose_answer(final, self.last_value)
        return self.rec.finish(
            items,
            value=self.last_value,
            code=self.last_code,
            evidence=self.evidence,
            error=None if items else error,
            iterations=self.iterations,
            explain_model=self.solver.explain_model,
        )


class TextLoop(ReactLoop):
    def _call(self, messages: list[BaseMessage]) -> LLMReply:
        return call_model(self.solver.model, messages, stop=STOP)

    def run(self, messages: list[BaseMessage]) -> SolverResult:
        hint = load_prompt("react_format_hint").strip()
        for _ in range(self.solver.max_iterations):
            reply = self._call(messages)
            text = strip_observation(reply.text)
            step = parse_react(text)
            messages.append(AIMessage(text))
            if step.code is not None and step.code.strip() in self.failed:
                # Small models copy their failed step verbatim (sampling does not
                # help: the copy is near-certain). Say so instead of rerunning it.
                obs = (
                    load_prompt("react_repeat").strip().format(error=self.failed[step.code.strip()])
                )
                self.iterations += 1
                self.rec.add(
                    reply,
                    thought=step.thought,
                    action="python",
                    code=step.code,
                    observation=obs,
                    ok=False,
                )
                messages.append(HumanMessage(f"Observation: {obs}"))
                continue
            if step.code is not None:
                result, obs = self.execute(step.code)
                self.rec.add(
                    reply,
                    thought=step.thought,
                    action="python",
                    code=step.code,
                    observation=obs,
                    ok=result.ok,
                    exec_seconds=result.duration_s,
                )
                messages.append(HumanMessage(f"Observation: {obs}"))
                continue
            if step.final_answer is not None and self.empty_hint and looks_empty(step.final_answer):
                # An empty/0 answer straight after a hint that the filter missed: one nudge.
                self.empty_hint = False
                obs = load_prompt("react_empty_answer").strip()
                self.rec.add(reply, thought=step.thought, action="answer", observation=obs)
                messages.append(HumanMessage(f"Observation: {obs}"))
                continue
            if step.final_answer is not None:
                self.rec.add(reply, thought=step.thought, action="answer")
                return self.finish(step.final_answer)
            self.rec.add(reply, thought=step.thought, action="none", observation=hint)
            messages.append(HumanMessage(hint))
        # Out of actions: use an answer-shaped last value, else ask once for the answer.
        if self.last_value is not None and value_to_items(self.last_value):
            return self.finish(None)
        messages.append(HumanMessage(load_prompt("react_final").strip()))
        reply = self._call(messages)
        step = parse_react(strip_observation(reply.text))
        self.rec.add(reply, thought=step.thought, action="answer")
        return self.finish(step.final_answer, error="max iterations reached without an answer")


class ToolLoop(ReactLoop):
    def run(self, messages: list[BaseMessage]) -> SolverResult:
        model = self.solver.model
        bound = model.bind_tools([PYTHON_TOOL])  # type: ignore[attr-defined]
        for _ in range(self.solver.max_iterations):
            reply = call_model(bound, messages)
            message = reply.message
            messages.append(message)
            if not message.tool_calls:
                step = parse_react(reply.text)
                final = step.final_answer or clean_answer(reply.text)
                self.rec.add(reply, thought=step.thought, action="answer")
                return self.finish(final)
            for i, call in enumerate(message.tool_calls):
                code = str(call["args"].get("code", ""))
                if call["name"] != "python" or not code.strip():
                    obs = f"Error: use the `python` tool with `code` (got {call['name']!r})"
                    self.rec.add(
                        reply if i == 0 else None, action="none", observation=obs, ok=False
                    )
                    messages.append(ToolMessage(obs, tool_call_id=call["id"] or f"call_{i}"))
                    continue
                result, obs = self.execute(code)
                self.rec.add(
                    reply if i == 0 else None,
                    action="python",
                    code=code,
                    observation=obs,
                    ok=result.ok,
                    exec_seconds=result.duration_s,
                )
                messages.append(ToolMessage(obs, tool_call_id=call["id"] or f"call_{i}"))
        if self.last_value is not None and value_to_items(self.last_value):
            return self.finish(None)
        messages.append(HumanMessage(load_prompt("react_final").strip()))
        reply = call_model(model, messages)
        step = parse_react(reply.text)
        self.rec.add(reply, thought=step.thought, action="answer")
        return self.finish(
            step.final_answer or clean_answer(reply.text) or None,
            error="max iterations reached without an answer",
        )
