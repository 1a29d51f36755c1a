"""``python_sandbox``: run pandas code over the tables in the bubblewrap sandbox.

Variables persist between the calls of one conversation (keyed by the run's
``thread_id``, else its ``run_id``; calls with neither share one default
namespace; a ``session_id`` the model passes is a separate set of variables
inside its conversation) without holding a sandbox worker between calls: see
:mod:`tablerag_agents.tools._namespace` for how, and for which values survive.
A code error or a time limit is a failed call (``status="error"``) whose text is
the traceback's tail; the variables of the code before it are kept. A matplotlib
figure the code leaves open is rendered to a PNG in the sandbox and returned in the
artifact's ``chart`` (bounded by :class:`~tablerag_agents.solve.chart_image.ChartLimits`).
"""

from __future__ import annotations

import base64
from typing import Any

import pandas as pd
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import ToolException
from pydantic import BaseModel, ConfigDict, Field
from tablerag_agents.tools._base import TableTool, engine_errors, frame_text, jsonable
from tablerag_agents.tools._examples import DataExamples
from tablerag_agents.tools._namespace import NamespaceStore, run_code
from tablerag_agents.tools.catalog import TableCatalog

from tablerag_agents.errors import ChartError, SandboxError, SandboxUnavailableError
from tablerag_agents.sandbox import ExecResult, Session
from tablerag_agents.solve.chart_image import Chart, ChartLimits, capture_cell, read_capture
from tablerag_agents.solve.hints import error_hint
from tablerag_agents.tables import Table

#: Characters of output shown to the model.
MAX_OBSERVATION_CHARS = 2_000


class PythonSandboxInput(BaseModel):
    """Arguments of ``python_sandbox``."""

    code: str = Field(
        min_length=1,
        description=(
            "Python code to run. Each table is a pandas DataFrame named by its variable "
            "name (describe_table shows it); the first table is also `df`. `pd` and `np` "
            "are imported. The value of the last line is returned, and print() output "
            "is shown."
        ),
    )
    tables: list[str] | None = Field(
        default=None,
        description=(
            "Ids of the tables to load. Omit to load every table when there are at most 10."
        ),
    )
    session_id: str | None = Field(
        default=None,
        max_length=100,
        description=(
            "Leave empty: variables are kept for your next call in this conversation "
            "anyway. Give a name only to work in a separate set of variables "
            "(within this conversation)."
        ),
    )


class _FigureGrab:
    """Render the figure a call's code left open (a chart record, or a note saying why not)."""

    def __init__(self, limits: ChartLimits, code: str, timeout: float | None) -> None:
        self.limits = limits
        self.code = code
        self.timeout = timeout
        self.chart: dict[str, Any] | None = None
        self.note: str | None = None

    def __call__(self, session: Session, result: ExecResult) -> None:
        """Run the capture cell after successful code; keep a checked PNG."""
        if not result.ok:
            return
        shot = session.run(capture_cell(self.limits), timeout=self.timeout)
        if not shot.ok:
            self.note = f"the figure could not be rendered: {shot.error_type}: {shot.error}"
            return
        if shot.value is None and not shot.notes:
            return  # no figure open: an ordinary call
        try:
            captured = read_capture(shot.value, self.limits)
        except ChartError as exc:
            self.note = f"the figure was not returned: {exc}"
            return
        chart = Chart(
            png_base64=base64.b64encode(captured.png).decode("ascii"),
            width=captured.width,
            height=captured.height,
            title=captured.title,
            code=self.code,
        )
        self.chart = chart.model_dump(mode="json")
        title = f" {captured.title!r}" if captured.title else ""
        self.note = (
            f"the figure{title} ({captured.width} x {captured.height} px) was returned to "
            "the user as a PNG"
        )


def conversation_key(config: RunnableConfig | None) -> str:
    """Which conversation a call belongs to: the thread id, else the run id, else ``default``."""
    config = config or {}
    configurable = config.get("configurable") or {}
    metadata = config.get("metadata") or {}
    thread = configurable.get("thread_id") or metadata.get("thread_id")
    if thread:
        return f"thread:{thread}"
    info = getattr(configurable.get("__pregel_runtime"), "execution_info", None)
    run_id = getattr(info, "run_id", None) or metadata.get("run_id")
    return f"run:{run_id}" if run_id else "default"


class PythonSandboxTool(TableTool):
    """Run model-written pandas code in the sandbox, keeping variables between calls."""

    name: str = "python_sandbox"
    description: str = (
        "Run Python (pandas) code over the tables in a secure sandbox and see its "
        "printed output and the value of its last line. Variables you define stay "
        "available in your next calls of this conversation (DataFrames, numbers, "
        "lists, dicts, imports, def functions). No files or network. An error comes "
        "back as a failed call with the last lines of the traceback: fix the code and "
        "call again."
    )
    args_schema: type[BaseModel] = PythonSandboxInput
    catalog: TableCatalog
    """The tables; the sandbox is ``catalog.resources.sandbox`` (created on first use)."""
    namespaces: NamespaceStore
    """Saved variables per conversation."""
    timeout_s: float | None = None
    """Time limit of one call's code (None: the sandbox policy's ``timeout_s``)."""
    chart_limits: ChartLimits = Field(default_factory=ChartLimits)
    """Size bounds of a figure returned as a PNG."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def example_notes(self, examples: DataExamples) -> dict[str, str]:
        """Code over a real table that returns a real value."""
        return {
            "code": f"Example: {examples.python()}",
            "tables": f"E.g. [{examples.table_id!r}].",
        }

    @engine_errors
    def _run(
        self,
        code: str,
        tables: list[str] | None = None,
        session_id: str | None = None,
        *,
        config: RunnableConfig,
    ) -> tuple[str, dict[str, Any]]:
        named = self.catalog.select(tables)
        frames = {name: t.df for name, t in named.items()}
        frames = {"df": next(iter(frames.values())), **frames}
        key = conversation_key(config)
        if session_id:  # a separate set within the conversation, never another one's
            key += f"/session:{session_id}"
        try:
            sandbox = self.catalog.resources.sandbox
        except RuntimeError as exc:  # the toolkit was closed
            raise ToolException(f"the sandbox is not available: {exc}") from exc
        figure = _FigureGrab(self.chart_limits, code, self.timeout_s)
        try:
            with self.namespaces.checkout(key) as saved:
                result, new, notes = run_code(
                    sandbox,
                    frames,
                    saved,
                    code,
                    timeout=self.timeout_s,
                    max_frame_bytes=self.namespaces.max_frame_bytes,
                    after=figure,
                )
                self.namespaces.put(key, new)
        except (SandboxError, SandboxUnavailableError) as exc:
            raise ToolException(f"the sandbox could not run the code: {exc}") from exc
        text = _observation(result, code, named)
        lost = [f"{n} ({why})" for n, why in new.lost.items()]
        notes += [f"not kept for your next call: {', '.join(lost)}"] if lost else []
        notes += [figure.note] if figure.note else []
        text += "".join(f"\n[note] {n}" for n in notes)
        if result.error:  # a code error or a time limit: a failed call (status="error")
            raise ToolException(text)
        artifact = {
            "ok": result.ok,
            "value": jsonable(result.value) if result.value is not None else None,
            "value_type": result.value_type,
            "stdout": result.stdout,
            "error": result.error,
            "tables": {name: t.id for name, t in named.items()},
            "variables": new.names(),
            "chart": figure.chart,
        }
        return text, artifact


def _observation(result: ExecResult, code: str, named: dict[str, Table]) -> str:
    """The text the model sees: output, then the error's last lines or the value."""
    if result.error:
        columns = [str(c) for t in named.values() for c in t.df.columns]
        hint = error_hint(result.error, code, columns)
        text = result.observation(MAX_OBSERVATION_CHARS)
        return f"Error:\n{text}" + (f"\n{hint}" if hint else "")
    if isinstance(result.value, pd.DataFrame | pd.Series):
        out = result.stdout.rstrip("\n")[: MAX_OBSERVATION_CHARS // 2]
        return (out + "\n" if out else "") + frame_text(result.value)
    return result.observation(MAX_OBSERVATION_CHARS)
