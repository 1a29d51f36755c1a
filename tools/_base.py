"""What every table tool shares: the base class, compact text and JSON artifacts."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable
from typing import Any, Literal, Self, TypeVar

import pandas as pd
from langchain_core.callbacks import AsyncCallbackManagerForToolRun
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import run_in_executor
from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, Field, ValidationError, model_validator
from pydantic.v1 import ValidationError as ValidationErrorV1
from tablerag_agents.tools._examples import DataExamples, with_field_notes

from tablerag_agents.errors import TableRAGError
from tablerag_agents.tables.render import render_table

#: Rows of a DataFrame shown to the model (the artifact keeps more).
MAX_TEXT_ROWS = 20
#: Rows of a DataFrame kept in an artifact.
MAX_ARTIFACT_ROWS = 1_000

RunF = TypeVar("RunF", bound=Callable[..., Any])


def engine_errors(run: RunF) -> RunF:
    """Make the engine's typed errors and timeouts tool errors (``status="error"``).

    Decorates a tool's ``_run``: a :class:`~tablerag_agents.errors.TableRAGError`
    (sandbox, model, index, table errors...) or a ``TimeoutError`` becomes a
    ``ToolException``, which the tool returns to the model as a ToolMessage with
    ``status="error"`` naming the error, so the agent (and retry middleware) sees
    a failed call. Anything else is a bug and propagates.
    """

    @functools.wraps(run)
    def wrapper(self: BaseTool, *args: Any, **kwargs: Any) -> Any:
        try:
            return run(self, *args, **kwargs)
        except (TableRAGError, TimeoutError) as exc:
            raise ToolException(f"{self.name} failed ({type(exc).__name__}): {exc}") from exc

    return wrapper  # type: ignore[return-value]


class TableTool(BaseTool):
    """Base of the table tools: errors go back to the model, data goes in the artifact.

    Subclasses implement a blocking ``_run`` decorated with :func:`engine_errors`;
    ``_arun`` runs it in a worker thread (the engine is blocking: the sandbox,
    DuckDB, FAISS), so an agent's event loop never waits on it. Every failed
    call (bad arguments, unknown table or column, an engine error, a timeout, a
    code error in the sandbox) comes back as a ToolMessage with ``status="error"``.
    """

    handle_tool_error: bool = True
    handle_validation_error: (
        bool | str | Callable[[ValidationError | ValidationErrorV1], str] | None
    ) = Field(default=lambda exc: invalid_arguments(exc))
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    examples: DataExamples | None = None
    """Real tables, columns and values the descriptions quote (the toolkit reads them)."""

    def example_notes(self, examples: DataExamples) -> dict[str, str]:
        """Sentences quoting ``examples``: ``""`` -> the description, else an argument's."""
        return {}

    @model_validator(mode="after")
    def _quote_examples(self) -> Self:
        """Append the example notes to the description and the arguments' descriptions."""
        if self.examples is not None:
            notes = dict(self.example_notes(self.examples))
            if extra := notes.pop("", ""):
                self.description = f"{self.description} {extra}"
            schema = self.args_schema
            if notes and isinstance(schema, type) and issubclass(schema, BaseModel):
                self.args_schema = with_field_notes(schema, notes)
        return self

    async def _arun(
        self,
        *args: Any,
        config: RunnableConfig,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
        **kwargs: Any,
    ) -> Any:
        """Run :meth:`_run` in a thread, passing the config when it takes one."""
        params = inspect.signature(self._run).parameters
        if "config" in params:
            kwargs["config"] = config
        if "run_manager" in params and run_manager is not None:
            kwargs["run_manager"] = run_manager.get_sync()
        return await run_in_executor(config, self._run, *args, **kwargs)


def invalid_arguments(exc: ValidationError | ValidationErrorV1) -> str:
    """Say which arguments were wrong, in one line per problem, for the model to retry."""
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ()))
        message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        problems.append(f"{where}: {message}" if where else message)
    return "Invalid arguments: " + "; ".join(problems)


def frame_text(df: pd.DataFrame | pd.Series, max_rows: int = MAX_TEXT_ROWS) -> str:
    """Render a DataFrame (or Series) as a compact markdown table for the model."""
    frame = _as_frame(df)
    if frame.empty and len(frame.columns) == 0:
        return "(empty table)"
    return render_table(frame, "markdown", max_rows=max_rows, max_cell_chars=80)


def frame_payload(
    df: pd.DataFrame | pd.Series, max_rows: int = MAX_ARTIFACT_ROWS
) -> dict[str, Any]:
    """Return ``{"columns", "records", "n_rows", "truncated"}``: the data as plain JSON.

    A meaningful index (anything but 0..n-1, e.g. a groupby key) becomes columns.
    """
    frame = _as_frame(df)
    part = frame.head(max_rows)
    data = json.loads(
        part.to_json(orient="split", index=False, date_format="iso", default_handler=str)
    )
    columns = [str(c) for c in data["columns"]]
    return {
        "columns": columns,
        "records": [dict(zip(columns, row, strict=True)) for row in data["data"]],
        "n_rows": len(frame),
        "truncated": len(frame) > max_rows,
    }


def _as_frame(df: pd.DataFrame | pd.Series) -> pd.DataFrame:
    frame = df.to_frame() if isinstance(df, pd.Series) else df
    if (
        not isinstance(frame.index, pd.RangeIndex)
        or frame.index.start != 0
        or frame.index.step != 1
    ):
        frame = frame.reset_index()
    if not frame.columns.is_unique or any(not isinstance(c, str) for c in frame.columns):
        frame = frame.set_axis(_unique_names(frame.columns), axis=1)
    return frame


def _unique_names(columns: pd.Index) -> list[str]:
    out: list[str] = []
    for col in columns:
        name, n = str(col), 2
        while name in out:
            name, n = f"{col}_{n}", n + 1
        out.append(name)
    return out


def jsonable(value: Any) -> Any:
    """Return ``value`` as plain JSON data (frames as payloads, the rest via ``str``)."""
    if isinstance(value, pd.DataFrame | pd.Series):
        return frame_payload(value)
    return json.loads(json.dumps(value, default=str))
