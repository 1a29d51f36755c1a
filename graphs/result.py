"""The typed result of one graph run: the one way callers read what the graph answered.

The ``answer`` node writes a :class:`GraphAnswer` (as a plain dict, so the
state stays serialisable) into the state and into the reply message's
metadata; :meth:`TableQAResult.from_output` reads a run's
:class:`~tablerag_agents.graphs.state.OutputState` back into types. The CLI,
the Python API, the server, the tools, the evaluation harness and the bench
scripts all go through it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, Field, computed_field

from tablerag_agents.solve.base import CitedCell
from tablerag_agents.solve.chart_image import Chart

REPLY_METADATA_KEY = "tablerag"
"""Key of the answer in the reply message's ``response_metadata``."""


def node_record(update: Mapping[str, Any] | None) -> dict[str, Any]:
    """The trace record a node's streamed update carries (``{}`` if it has none)."""
    trace = (update or {}).get("trace") or []
    return dict(trace[-1]) if trace and "node" in trace[-1] else {}


class GraphAnswer(BaseModel):
    """The final answer of one turn, as the ``answer`` node writes it."""

    question: str = ""
    """The question answered (the standalone rewrite of a follow-up)."""
    text: str = ""
    """Short answer (items joined by '|'), or the abstention text."""
    items: list[str] = Field(default_factory=list)
    """The answer's values (empty when abstained)."""
    sentence: str = ""
    """A sentence that answers the question (empty when abstained)."""
    cited_cells: list[CitedCell] = Field(default_factory=list)
    """Table cells the answer comes from."""
    confidence: float = 0.0
    """How likely the answer is right: a vote's agreement (valid runs backing it out of
    all runs), or a single run's estimate (README, "Confidence"); 0: no value."""
    abstained: bool = True
    """True when the graph gave no value: none found, or one withheld below
    ``min_confidence`` (``low_confidence="abstain"``)."""
    low_confidence: bool = False
    """True when the confidence is below the run's ``min_confidence`` (flagged or withheld)."""
    best_guess: str = ""
    """The withheld answer when one below ``min_confidence`` was withheld, else ""."""
    solver: str = ""
    """The solver whose attempt became the answer."""
    error: str | None = None
    """That attempt's error, if it failed."""
    table_ids: list[str] = Field(default_factory=list)
    """The tables the answer was sought in (the first is the main table)."""
    chart: Chart | None = None
    """The chart, when the question asked for one: a base64 PNG (at most
    ``ChartLimits.max_png_bytes``), its size and title, and the data it plots."""

    @classmethod
    def from_message(cls, message: BaseMessage) -> GraphAnswer | None:
        """The answer a reply message carries, or None for any other message."""
        data = message.response_metadata.get(REPLY_METADATA_KEY)
        return cls.model_validate(data) if data else None

    def record(self) -> dict[str, Any]:
        """The answer as JSON-ready data (the state's ``answer``, the server's ``answer``)."""
        return self.model_dump(mode="json")


class TableQAResult(BaseModel):
    """One run of the graph: the answer, where it came from and what it cost."""

    answer: GraphAnswer = Field(default_factory=GraphAnswer)
    """The final answer."""
    table_hits: list[dict[str, Any]] = Field(default_factory=list)
    """Ranked corpus search hits (empty when the tables were given)."""
    retrieved: dict[str, str] = Field(default_factory=dict)
    """Schema and cells retrieved per large table (empty for small tables)."""
    trace: list[dict[str, Any]] = Field(default_factory=list)
    """Per graph node: seconds, prompt and completion tokens, what it produced."""
    seconds: float = 0.0
    """Wall-clock seconds of the run."""

    @classmethod
    def from_output(
        cls, state: Mapping[str, Any], *, seconds: float | None = None
    ) -> TableQAResult:
        """Read a run's final values (an ``OutputState``) into a result.

        Args:
            state: What ``graph.invoke`` returned, or the last "values" chunk of a stream.
            seconds: The run's wall-clock time; default: the sum of the nodes' seconds.
        """
        trace = list(state.get("trace") or [])
        if seconds is None:
            seconds = sum(float(r.get("seconds", 0.0)) for r in trace)
        return cls(
            answer=GraphAnswer.model_validate(state.get("answer") or {}),
            table_hits=list(state.get("table_hits") or []),
            retrieved=dict(state.get("retrieved") or {}),
            trace=trace,
            seconds=seconds,
        )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def input_tokens(self) -> int:
        """Prompt tokens over every node."""
        return sum(int(r.get("input_tokens", 0)) for r in self.trace)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def output_tokens(self) -> int:
        """Completion tokens over every node."""
        return sum(int(r.get("output_tokens", 0)) for r in self.trace)

    @property
    def nodes(self) -> list[str]:
        """The nodes that ran, in order."""
        return [str(r.get("node")) for r in self.trace]

    @property
    def solver_steps(self) -> list[dict[str, Any]]:
        """Every solver attempt's steps in order (action, code, ok, observation; cut)."""
        return [
            step
            for record in self.trace
            for step in ((record.get("produced") or {}).get("attempts") or {}).get("steps") or []
        ]
