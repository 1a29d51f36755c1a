"""PyReAct solver (Chen et al., TableRAG): a ReAct loop whose actions run Python in the sandbox.

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
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableBinding

from tablerag_agents.prompts import load_prompt
from tablerag_agents.sandbox import Sandbox
from tablerag_agents.solve.base import SolverContext, SolverResult, as_context
from tablerag_agents.solve.llm_calls import QUIET, RunRecorder
from tablerag_agents.solve.preview import (
    DEFAULT_FULL_TABLE_TOKENS,
    python_solver_tables,
    user_prompt,
)
from tablerag_agents.solve.react_loop import STOP, TextLoop, ToolLoop, choose_answer
from tablerag_agents.tables.typed_table import TypedTable

__all__ = ["STOP", "Mode", "PyReActSolver", "choose_answer", "supports_native_tools"]

logger = logging.getLogger(__name__)

Mode = Literal["auto", "text", "tools"]


def supports_native_tools(model: Runnable[Any, Any]) -> bool:
    """True if ``model`` implements ``bind_tools`` and is not the embedded local model."""
    from tablerag_agents.models.server import ALIAS

    base = model.bound if isinstance(model, RunnableBinding) else model
    if not isinstance(base, BaseChatModel):
        return False
    if getattr(base, "model_name", None) == ALIAS:
        return False  # the embedded 1.5B model writes its tool calls as JSON text
    return type(base).bind_tools is not BaseChatModel.bind_tools


class PyReActSolver:
    """Answer a question by reasoning and running Python over the table.

    Args:
        model: Chat model (the embedded one, or any provider).
        sandbox: Where the code runs (one session per question).
        max_iterations: Maximum code actions per question.
        mode: ``auto``, ``text`` (ReAct text) or ``tools`` (native tool calls).
        head_rows: Rows shown in the prompt when the whole table does not fit.
        full_table_tokens: Show every row when the table fits in this many tokens.
        clean: Convert number-like text columns to numbers before solving.
        exec_timeout_s: Time limit per code run.
        max_observation_chars: Longest observation fed back to the model.
        explain_model: If set, writes the answer sentence (one more call).
        typed_columns: Give the code parsed companion columns (``df['Population__num']``,
            ``df['Time__sec']``...), flagged total rows and turned transposed tables
            (:mod:`~tablerag_agents.solve.typed_frames`). Off by default: no measured
            gain on WTQ dev.
        row_numbers: Give every table a ``row_no`` column (1 = first row) that the
            prompt names for questions about order. Off by default: no measured gain on
            WTQ dev (``bench/results/error_analysis_dev.md``).
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
        full_table_tokens: int = DEFAULT_FULL_TABLE_TOKENS,
        clean: bool = True,
        exec_timeout_s: float = 10.0,
        max_observation_chars: int = 1200,
        explain_model: BaseChatModel | None = None,
        typed_columns: bool = False,
        row_numbers: bool = False,
    ) -> None:
        """Store the model, sandbox and options."""
        if max_iterations < 1:
            raise ValueError(f"max_iterations must be >= 1, got {max_iterations}")
        self.model = model
        self.sandbox = sandbox
        self.max_iterations = max_iterations
        self.mode: Mode = mode
        self.head_rows = head_rows
        self.full_table_tokens = full_table_tokens
        self.clean = clean
        self.exec_timeout_s = exec_timeout_s
        self.max_observation_chars = max_observation_chars
        self.explain_model = explain_model
        self.typed_columns = typed_columns
        self.row_numbers = row_numbers

    @property
    def resolved_mode(self) -> Literal["text", "tools"]:
        """The mode actually used (``auto`` resolved for this model)."""
        if self.mode == "auto":
            return "tools" if supports_native_tools(self.model) else "text"
        return self.mode

    def _user_prompt(
        self,
        ctx: SolverContext,
        tables: dict[str, pd.DataFrame],
        views: dict[str, TypedTable] | None = None,
    ) -> str:
        return user_prompt(
            "pyreact_user",
            ctx,
            tables,
            head_rows=self.head_rows,
            full_table_tokens=self.full_table_tokens,
            views=views,
        )

    def solve(self, question: str | SolverContext, df: pd.DataFrame | None = None) -> SolverResult:
        """Answer ``question`` over ``df`` (or the tables of a :class:`SolverContext`)."""
        ctx = as_context(question, df)
        tables, views, named_views = python_solver_tables(
            ctx, clean=self.clean, typed_columns=self.typed_columns, row_numbers=self.row_numbers
        )
        rec = RunRecorder(self.name, ctx, views=views)
        mode = self.resolved_mode
        system = load_prompt("pyreact_system" if mode == "text" else "pyreact_tools_system").format(
            max_iterations=self.max_iterations
        )
        messages: list[BaseMessage] = [
            SystemMessage(system),
            HumanMessage(self._user_prompt(ctx, tables, named_views)),
        ]
        with self.sandbox.session(tables) as session:
            session.run(QUIET)
            loop_cls = TextLoop if mode == "text" else ToolLoop
            loop = loop_cls(self, session, rec, tables)
            return loop.run(messages)
