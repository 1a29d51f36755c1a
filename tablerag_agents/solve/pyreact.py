"""PyReAct solver (seed 002): a ReAct loop whose actions run Python in the sandbox.

Two modes: ``text`` (Thought / Action / Observation / Final Answer in plain
text, parsed leniently; for models without native tool calls such as the
embedded Qwen 1.5B) and ``tools`` (the model calls a ``python`` tool through
``bind_tools``). ``auto`` picks ``tools`` when the model implements
``bind_tools`` and is not the embedded model.

The message history only grows: earlier messages are never rewritten, so a
server with a prompt-prefix cache only processes each step's new tokens.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

import pandas as pd
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableBinding

from tablerag_agents.prompts import load_prompt
from tablerag_agents.sandbox import ExecResult, Sandbox
from tablerag_agents.solve.answer import value_to_items
from tablerag_agents.solve.base import SolverContext, SolverResult, as_context
from tablerag_agents.solve.parsing import (
    ParsedStep,
    clean_answer,
    parse_react,
    strip_observation,
    with_result_expression,
)
from tablerag_agents.solve.preview import clean_numbers, context_block
from tablerag_agents.solve.runtime import (
    LLMReply,
    RunRecorder,
    call_model,
    observation_text,
    retry_model,
)

logger = logging.getLogger(__name__)

Mode = Literal["auto", "text", "tools"]
STOP = ["Observation:", "\nObservation"]


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


def supports_native_tools(model: Runnable[Any, Any]) -> bool:
    """True if ``model`` implements ``bind_tools`` and is not the embedded local model."""
    from tablerag_agents.models.server import ALIAS

    base = model.bound if isinstance(model, RunnableBinding) else model
    if not isinstance(base, BaseChatModel):
        return False
    if getattr(base, "model_name", None) == ALIAS:
        return False  # the embedded model writes tool calls as text (see DESIGN.md)
    return type(base).bind_tools is not BaseChatModel.bind_tools


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


class PyReActSolver:
    """Answer a question by reasoning and running Python over the table.

    Args:
        model: Chat model (the embedded one, or any provider).
        sandbox: Where the code runs (one session per question).
        max_iterations: Maximum code actions per question.
        mode: ``auto``, ``text`` (ReAct text) or ``tools`` (native tool calls).
        head_rows: Rows of the table shown in the prompt.
        clean: Convert number-like text columns to numbers before solving.
        exec_timeout_s: Time limit per code run.
        max_observation_chars: Longest observation fed back to the model.
        retry_temperature: When the model repeats code that failed, resample the
            step at this temperature (None: keep the repeat).
        explain_model: If set, writes the answer sentence (one more call).
    """

    name = "pyreact"

    def __init__(
        self,
        model: Runnable[Any, Any],
        sandbox: Sandbox,
        *,
        max_iterations: int = 5,
        mode: Mode = "auto",
        head_rows: int = 8,
        clean: bool = True,
        exec_timeout_s: float = 10.0,
        max_observation_chars: int = 1200,
        retry_temperature: float | None = 0.6,
        explain_model: BaseChatModel | None = None,
    ) -> None:
        """Store the model, sandbox and options."""
        if max_iterations < 1:
            raise ValueError(f"max_iterations must be >= 1, got {max_iterations}")
        self.model = model
        self.sandbox = sandbox
        self.max_iterations = max_iterations
        self.mode: Mode = mode
        self.head_rows = head_rows
        self.clean = clean
        self.exec_timeout_s = exec_timeout_s
        self.max_observation_chars = max_observation_chars
        self.retry_temperature = retry_temperature
        self.explain_model = explain_model

    @property
    def resolved_mode(self) -> Literal["text", "tools"]:
        """The mode actually used (``auto`` resolved for this model)."""
        if self.mode == "auto":
            return "tools" if supports_native_tools(self.model) else "text"
        return self.mode

    def _user_prompt(self, ctx: SolverContext, tables: dict[str, pd.DataFrame]) -> str:
        table, extra = context_block(
            tables, ctx.extra_text(), ctx.sub_table, head_rows=self.head_rows
        )
        text = load_prompt("pyreact_user").format(table=table, extra=extra, question=ctx.question)
        return text.replace("\n\n", "\n")

    def solve(self, question: str | SolverContext, df: pd.DataFrame | None = None) -> SolverResult:
        """Answer ``question`` over ``df`` (or the tables of a :class:`SolverContext`)."""
        ctx = as_context(question, df)
        tables = ctx.python_tables()
        if self.clean:
            tables = {name: clean_numbers(frame) for name, frame in tables.items()}
        rec = RunRecorder(self.name, ctx)
        mode = self.resolved_mode
        system = load_prompt("pyreact_system" if mode == "text" else "pyreact_tools_system").format(
            max_iterations=self.max_iterations
        )
        messages: list[BaseMessage] = [
            SystemMessage(system),
            HumanMessage(self._user_prompt(ctx, tables)),
        ]
        with self.sandbox.session(tables) as session:
            loop = (
                _TextLoop(self, session, rec) if mode == "text" else _ToolLoop(self, session, rec)
            )
            return loop.run(messages)


class _Loop:
    """State of one question's ReAct loop."""

    def __init__(self, solver: PyReActSolver, session: Any, rec: RunRecorder) -> None:
        self.solver = solver
        self.session = session
        self.rec = rec
        self.last_value: Any = None
        self.last_code = ""
        self.iterations = 0
        self.failed: set[str] = set()

    def execute(self, code: str) -> tuple[ExecResult, str]:
        """Run one action; remember its value when it succeeded."""
        self.iterations += 1
        result = self.session.run(with_result_expression(code), timeout=self.solver.exec_timeout_s)
        obs = observation_text(result, self.solver.max_observation_chars)
        if result.ok and result.value is not None:
            self.last_value = result.value
            self.last_code = code
        return result, obs

    def finish(self, final: str | None, error: str | None = None) -> SolverResult:
        items = choose_answer(final, self.last_value)
        return self.rec.finish(
            items,
            value=self.last_value,
            code=self.last_code,
            error=None if items else error,
            iterations=self.iterations,
            explain_model=self.solver.explain_model,
        )


class _TextLoop(_Loop):
    def _call(self, messages: list[BaseMessage], temperature: float | None = None) -> LLMReply:
        return call_model(retry_model(self.solver.model, temperature), messages, stop=STOP)

    def _next_step(self, messages: list[BaseMessage]) -> tuple[LLMReply, ParsedStep, str]:
        """Ask for the next step; resample once if it repeats code that already failed."""
        reply = self._call(messages)
        text = strip_observation(reply.text)
        step = parse_react(text)
        if (
            step.code is not None
            and step.code.strip() in self.failed
            and self.solver.retry_temperature
        ):
            self.rec.add(
                reply,
                thought=step.thought,
                action="none",
                code=step.code,
                observation="(discarded: repeats code that failed; resampled)",
            )
            reply = self._call(messages, self.solver.retry_temperature)
            text = strip_observation(reply.text)
            step = parse_react(text)
        return reply, step, text

    def run(self, messages: list[BaseMessage]) -> SolverResult:
        hint = load_prompt("react_format_hint").strip()
        for _ in range(self.solver.max_iterations):
            reply, step, text = self._next_step(messages)
            messages.append(AIMessage(text))
            if step.code is not None:
                result, obs = self.execute(step.code)
                if not result.ok:
                    self.failed.add(step.code.strip())
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


class _ToolLoop(_Loop):
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
        final = step.final_answer or clean_answer(reply.text) or None
        return self.finish(final, error="max iterations reached without an answer")
