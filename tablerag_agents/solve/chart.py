"""The chart solver: the model writes ``make_chart(df)`` with matplotlib; the sandbox draws it.

For a question that asks for a plot (:func:`~tablerag_agents.solve.chart_request.asks_for_chart`)
the answer is a picture, not a value. The model writes a function that computes the
data to plot, draws it with matplotlib and returns that data. It runs in the sandbox
(Agg backend, no display), where :func:`~tablerag_agents.solve.chart_image.capture_cell`
renders the figure to a PNG within :class:`~tablerag_agents.solve.chart_image.ChartLimits`;
the host checks the PNG and returns it, with the data, as
:attr:`SolverResult.chart <tablerag_agents.solve.base.SolverResult.chart>`. Code that fails,
draws nothing or draws too large a picture is shown to the model once to fix; if the fix
fails too, the result carries the error and no chart.
"""

from __future__ import annotations

import base64
import logging
import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable

from tablerag_agents.errors import ChartError
from tablerag_agents.models.calls import LLMReply, call_model, retry_model
from tablerag_agents.prompts import load_prompt
from tablerag_agents.sandbox import ExecResult, Sandbox
from tablerag_agents.solve.answer import explain
from tablerag_agents.solve.base import SolverContext, SolverResult, as_context
from tablerag_agents.solve.chart_image import (
    Captured,
    Chart,
    ChartLimits,
    capture_cell,
    chart_data,
    read_capture,
)
from tablerag_agents.solve.confidence import PROGRAM_RUN, REPAIRED
from tablerag_agents.solve.llm_calls import QUIET, RunRecorder, observation_text
from tablerag_agents.solve.parsing import extract_code, fenced_blocks
from tablerag_agents.solve.preview import (
    DEFAULT_FULL_TABLE_TOKENS,
    python_solver_tables,
    user_prompt,
)

logger = logging.getLogger(__name__)

CHART_SOLVER = "chart"
"""The chart solver's name (the graph's ``solve`` node picks it for chart questions)."""
MISSING_MATPLOTLIB = (
    "matplotlib is not installed where the sandbox runs Python; install it in the same "
    "environment (pip install 'tablerag-agents[charts]')"
)
_DEF = re.compile(r"^def\s+make_chart\s*\(", re.M)
# Agg draws off-screen. show/savefig/close would only lose the figure before it is read.
_PRELUDE = f"""{QUIET}
import matplotlib
matplotlib.use("agg")
import matplotlib.pyplot as plt
plt.close("all")
plt.show = plt.savefig = plt.close = lambda *args, **kwargs: None
"""


def extract_chart_code(text: str) -> str | None:
    """The code defining ``make_chart`` in a reply (or its first Python block)."""
    for _, body in fenced_blocks(text):
        if _DEF.search(body):
            return body
    return extract_code(text, "python")


def chart_program(code: str) -> str:
    """The cell to run: matplotlib set up off-screen, the code, then ``make_chart(df.copy())``."""
    call = "\n\nmake_chart(df.copy())" if _DEF.search(code) else ""
    return f"{_PRELUDE}\n{code}{call}"


@dataclass
class Drawing:
    """One attempt at the chart: the code and what it gave."""

    code: str
    captured: Captured | None = None
    value: Any = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    fixable: bool = True
    """False when showing the error to the model cannot help (matplotlib missing)."""


class ChartSolver:
    """Answer a request for a plot with a PNG chart and the data behind it.

    Args:
        model: Chat model writing ``make_chart(df)``.
        sandbox: Where the code runs and the figure is rendered.
        limits: Size bounds of the PNG and of the data kept.
        repair: Show a failure (error, no figure, too large) to the model once.
        head_rows: Rows shown in the prompt when the whole table does not fit.
        full_table_tokens: Show every row when the table fits in this many tokens.
        exec_timeout_s: Time limit of the code, and again of the rendering.
        retry_temperature: Sampling temperature of the repair call (None: the model's).
    """

    name = CHART_SOLVER

    def __init__(
        self,
        model: Runnable[Any, Any],
        sandbox: Sandbox,
        *,
        limits: ChartLimits | None = None,
        repair: bool = True,
        head_rows: int = 8,
        full_table_tokens: int = DEFAULT_FULL_TABLE_TOKENS,
        exec_timeout_s: float = 20.0,
        retry_temperature: float | None = 0.6,
    ) -> None:
        """Store the model, sandbox and options."""
        self.model = model
        self.sandbox = sandbox
        self.limits = limits or ChartLimits()
        self.repair = repair
        self.head_rows = head_rows
        self.full_table_tokens = full_table_tokens
        self.exec_timeout_s = exec_timeout_s
        self.retry_temperature = retry_temperature

    def solve(self, question: str | SolverContext, df: pd.DataFrame | None = None) -> SolverResult:
        """Draw the chart ``question`` asks for over ``df`` (or a context's tables)."""
        ctx = as_context(question, df)
        tables, views, named = python_solver_tables(
            ctx, clean=True, typed_columns=False, row_numbers=False
        )
        rec = RunRecorder(self.name, ctx, views=views)
        prompt = user_prompt(
            "chart_user",
            ctx,
            tables,
            head_rows=self.head_rows,
            full_table_tokens=self.full_table_tokens,
            views=named,
        )
        messages: list[BaseMessage] = [
            SystemMessage(load_prompt("chart_system")),
            HumanMessage(prompt),
        ]
        drawing = self._draw(rec, call_model(self.model, messages), tables)
        if drawing.error is not None and self.repair and drawing.fixable:
            repair = load_prompt("chart_repair").format(error=drawing.error)
            follow = [AIMessage(rec.steps[-1].raw), HumanMessage(repair)]
            model = retry_model(self.model, self.retry_temperature)
            drawing = self._draw(rec, call_model(model, messages + follow), tables)
        if drawing.captured is None:
            error = f"the chart could not be drawn: {drawing.error}"
            return rec.finish(None, code=drawing.code, error=error)
        return self._finish(rec, drawing, drawing.captured)

    def _draw(self, rec: RunRecorder, reply: LLMReply, tables: dict[str, pd.DataFrame]) -> Drawing:
        """Run the reply's code, render its figure, check it, and record the step."""
        code = extract_chart_code(reply.text) or ""
        if not code:
            rec.add(reply, action="none", observation="no code in the reply", ok=False)
            return Drawing(code, error="the reply had no ```python block")
        drawing = Drawing(code)
        seconds = 0.0
        with self.sandbox.session(tables) as session:
            run = session.run(chart_program(code), timeout=self.exec_timeout_s)
            seconds += run.duration_s
            if not run.ok:
                drawing.error = observation_text(run, 800)
                if run.error_type == "ModuleNotFoundError" and "matplotlib" in (run.error or ""):
                    drawing.error, drawing.fixable = MISSING_MATPLOTLIB, False
            else:
                drawing.value = run.value
                shot = session.run(capture_cell(self.limits), timeout=self.exec_timeout_s)
                seconds += shot.duration_s
                drawing.error = self._read(drawing, shot)
        observation = drawing.error or self._summary(drawing)
        rec.add(
            reply,
            action="python",
            code=code,
            observation=observation,
            ok=drawing.error is None,
            exec_seconds=seconds,
        )
        return drawing

    def _read(self, drawing: Drawing, shot: ExecResult) -> str | None:
        """Check the rendered figure; the error text, or None when it is a valid PNG."""
        if not shot.ok:
            return f"rendering the chart failed: {observation_text(shot, 600)}"
        if shot.value is None and shot.notes:  # e.g. the value was too large to transfer
            return f"the chart could not be returned: {'; '.join(shot.notes)}"
        try:
            drawing.captured = read_capture(shot.value, self.limits)
        except ChartError as exc:
            return str(exc)
        if drawing.captured.figures > 1:
            drawing.notes.append(
                f"the code drew {drawing.captured.figures} figures; the last one is shown"
            )
        return None

    @staticmethod
    def _summary(drawing: Drawing) -> str:
        shot = drawing.captured
        assert shot is not None
        title = f" {shot.title!r}" if shot.title else ""
        return f"drew a {shot.width} x {shot.height} chart{title}"

    def _finish(self, rec: RunRecorder, drawing: Drawing, shot: Captured) -> SolverResult:
        """The result: a short answer naming the chart, the chart, a confidence."""
        data = chart_data(drawing.value, self.limits)
        notes = list(drawing.notes)
        if data is None:
            notes.append("the code returned no data table (make_chart should return it)")
        label = f"Chart: {shot.title}" if shot.title else "Chart"
        value = drawing.value if isinstance(drawing.value, pd.DataFrame) else None
        result = rec.finish([label], value=value, code=drawing.code)
        named = f" {shot.title!r}" if shot.title else ""
        rows = f" from {data.n_rows} rows of data" if data is not None else ""
        result.explanation = explain(label, result.provenance, f"Drew the chart{named}{rows}")
        result.chart = Chart(
            png_base64=base64.b64encode(shot.png).decode("ascii"),
            width=shot.width,
            height=shot.height,
            title=shot.title,
            data=data,
            code=drawing.code,
            notes=notes,
        )
        result.confidence = PROGRAM_RUN * (REPAIRED if rec.code_errors else 1.0)
        return result
