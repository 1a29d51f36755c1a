"""Inputs and outputs shared by every solver: context, trace steps, results."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import pandas as pd
from pydantic import BaseModel, Field

from tablerag_agents.solve.chart_image import Chart
from tablerag_agents.tables.render import TableFormat
from tablerag_agents.tables.source import TableSource

MAIN_TABLE = "df"
"""Name of the main table in Python code (the SQL solver calls it ``t``)."""
_RESERVED = {"pd", "np", "_", "df"}


def python_name(name: str, taken: set[str] | None = None) -> str:
    """Turn a table id into a Python identifier (``"204-csv/590"`` -> ``"t_204_csv_590"``)."""
    ident = re.sub(r"\W+", "_", name).strip("_") or "table"
    if not ident[0].isalpha():
        ident = "t_" + ident
    base, i = ident, 2
    while taken is not None and ident in taken:
        ident, i = f"{base}_{i}", i + 1
    return ident


@dataclass(kw_only=True)
class SolverContext:
    """Everything a solver may use to answer one question.

    The graph fills the optional fields from earlier stages (retrieval,
    filtering, clarification); a solver used alone only needs the question and
    one table. Code always runs over ``tables``; pass a filtered table there if
    the code should only see the filtered rows.

    Attributes:
        question: The user's question.
        tables: Tables by id; the first one is the main table (``df`` in Python,
            ``t`` in SQL); every table is also reachable under its id.
        caption: Title of the main table, if known.
        schema_text: Retrieved schema (column names, types, examples) as text.
        retrieved_cells: Retrieved ``(column, value)`` cells as text.
        sub_table: Rows/columns a filter stage judged relevant (shown in the prompt).
        clarifications: Explanations of terms in the question.
        table_format: How table rows are written in prompts (markdown, string, html).
        sources: Tables (by id) that live in a database or a file scanned out of
            core; their entry in ``tables`` is only a sample, and the SQL solver
            queries the source itself.
    """

    question: str
    tables: dict[str, pd.DataFrame]
    caption: str = ""
    schema_text: str | None = None
    retrieved_cells: str | None = None
    sub_table: pd.DataFrame | None = None
    clarifications: str | None = None
    table_format: TableFormat = "markdown"
    sources: dict[str, TableSource] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Reject a context without any table."""
        if not self.tables:
            raise ValueError("SolverContext needs at least one table")

    @classmethod
    def from_df(
        cls, question: str, df: pd.DataFrame, *, table_id: str = "t", **kwargs: Any
    ) -> SolverContext:
        """Build a context for one table."""
        return cls(question=question, tables={table_id: df}, **kwargs)

    @property
    def main_id(self) -> str:
        """Id of the main table."""
        return next(iter(self.tables))

    @property
    def main_df(self) -> pd.DataFrame:
        """The main table."""
        return self.tables[self.main_id]

    def python_names(self) -> dict[str, str]:
        """Table ids by their name in Python code: ``df`` plus one identifier per table."""
        out: dict[str, str] = {MAIN_TABLE: self.main_id}
        if len(self.tables) > 1:
            for tid in self.tables:
                out[python_name(tid, set(out) | _RESERVED)] = tid
        return out

    def python_tables(
        self, frames: Mapping[str, pd.DataFrame] | None = None
    ) -> dict[str, pd.DataFrame]:
        """Tables (or ``frames``, by table id) by their name in Python code."""
        source = self.tables if frames is None else frames
        return {name: source[tid] for name, tid in self.python_names().items()}

    def extra_text(self) -> str:
        """Render the optional context fields (schema, cells, clarifications) as text."""
        parts = []
        if self.caption:
            parts.append(f"Table title: {self.caption}")
        if self.schema_text:
            parts.append(f"Schema:\n{self.schema_text.strip()}")
        if self.retrieved_cells:
            parts.append(f"Relevant cells:\n{self.retrieved_cells.strip()}")
        if self.clarifications:
            parts.append(f"Notes on terms:\n{self.clarifications.strip()}")
        return "\n".join(parts)


def as_context(question: str | SolverContext, df: pd.DataFrame | None) -> SolverContext:
    """Accept either a ready context or a question plus one DataFrame."""
    if isinstance(question, SolverContext):
        if df is not None:
            raise ValueError("pass the table inside the SolverContext, not as `df`")
        return question
    if df is None:
        raise ValueError("a question string needs a DataFrame `df`")
    return SolverContext.from_df(question, df)


class CitedCell(BaseModel):
    """One cell of an input table that supports the answer."""

    table: str = Field(description="Id of the table the cell belongs to.")
    row: int = Field(description="0-based row position in that table.")
    column: str
    value: str


class Provenance(BaseModel):
    """Where the answer came from, so a user can check it."""

    method: Literal["result_rows", "value_match", "none"] = "none"
    """``result_rows``: rows the code returned (with their original row numbers);
    ``value_match``: table cells whose value equals an answer item."""
    cells: list[CitedCell] = Field(default_factory=list)
    evidence_rows: list[dict[str, Any]] = Field(default_factory=list)
    """The rows the code or SQL returned (at most a few), as column -> value."""


class TraceStep(BaseModel):
    """One model call and, if it asked for one, the code it ran."""

    step: int
    thought: str = ""
    action: Literal["python", "sql", "answer", "none"] = "none"
    code: str = ""
    observation: str = ""
    ok: bool | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    llm_seconds: float = 0.0
    exec_seconds: float = 0.0
    raw: str = ""


class Vote(BaseModel):
    """One run's answer in a vote: a sampled program (SQL or pandas) or a reading."""

    source: str
    """The solver that produced it."""
    items: list[str] = Field(default_factory=list)
    """Its answer items (empty: the run failed or gave no value)."""
    code: str = ""
    """The program that computed it ("" for a reading)."""
    dropped: str | None = None
    """Why the vote's execution checks left it out (None: it counted)."""


class SolverResult(BaseModel):
    """The outcome of one solver on one question."""

    solver: str
    question: str
    answer: str = ""
    """Short answer (items joined by ``|`` when there are several)."""
    answer_items: list[str] = Field(default_factory=list)
    explanation: str = ""
    """A natural-language answer sentence."""
    provenance: Provenance = Field(default_factory=Provenance)
    trace: list[TraceStep] = Field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    """Input tokens served from the model server's prompt-prefix cache."""
    seconds: float = 0.0
    iterations: int = 0
    error: str | None = None
    """Why no answer was produced (exception, iteration limit...)."""
    code_errors: int = 0
    """How many executed code snippets raised an exception."""
    truncated: bool = False
    """True when the table had to be cut to fit the prompt."""
    votes: list[Vote] = Field(default_factory=list)
    """Every run that voted, when the solver sampled several programs (or is a vote)."""
    confidence: float | None = None
    """The solver's own estimate that the answer is right (a vote's agreement); None:
    the caller estimates it (:func:`~tablerag_agents.solve.confidence.run_confidence`)."""
    tried: list[str] = Field(default_factory=list)
    """Solvers a :class:`VotingSolver` ran, in order."""
    second_opinion: Vote | None = None
    """Another solver's answer to the same question, when the run was cross-checked
    (:class:`~tablerag_agents.solve.second_opinion.SecondOpinionSolver`)."""
    chart: Chart | None = None
    """The chart, when the question asked for one (the chart solver); the answer names it."""

    @property
    def ok(self) -> bool:
        """True if an answer was produced."""
        return self.error is None and bool(self.answer_items)


class Solver(Protocol):
    """Anything that answers a question over tables."""

    name: str

    def solve(self, question: str | SolverContext, df: pd.DataFrame | None = None) -> SolverResult:
        """Answer ``question`` (a string with ``df``, or a full context)."""
        ...


def frame_records(frame: pd.DataFrame, limit: int = 5) -> list[dict[str, Any]]:
    """Return the first ``limit`` rows as JSON-able dicts (values as strings)."""
    head = frame.head(limit)
    return [{str(k): _cell_str(v) for k, v in row.items()} for _, row in head.iterrows()]


def _cell_str(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)
