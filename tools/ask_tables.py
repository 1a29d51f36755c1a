"""``ask_tables``: the whole TableRAG graph as one tool (question -> answer with cited cells)."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForToolRun
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import ToolException
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr
from tablerag_agents.graphs import Context, GraphAnswer, TableQAResult, TableRAGGraph
from tablerag_agents.tools._base import TableTool, engine_errors
from tablerag_agents.tools._examples import DataExamples
from tablerag_agents.tools.catalog import TableCatalog

from tablerag_agents.errors import TableRAGError

#: Cited cells listed in the text for the model (the artifact has them all).
MAX_CITED_SHOWN = 8
#: Rows of a chart's data listed in the text (the artifact's chart has them all).
MAX_CHART_ROWS_SHOWN = 10


class AskTablesInput(BaseModel):
    """Arguments of ``ask_tables``."""

    question: str = Field(
        min_length=1,
        description="A self-contained question.",
    )
    tables: list[str] | None = Field(
        default=None,
        description="Ids of the tables to answer from. Omit to let the tool find the table.",
    )


class AskTablesTool(TableTool):
    """Answer a question from the tables with the full TableRAG pipeline."""

    name: str = "ask_tables"
    description: str = (
        "Answer a factual question from the tables in one step: it finds the right "
        "table, retrieves the relevant columns and cells, writes and runs SQL or "
        "Python in a sandbox, and returns the answer with the table cells it comes "
        "from. Use the other tools to explore step by step instead."
    )
    args_schema: type[BaseModel] = AskTablesInput
    catalog: TableCatalog
    """The tables, models and sandbox the graph shares with the other tools."""
    context: Context = Field(default_factory=Context)
    """Run settings of the graph (solver, filters, clarifiers...)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    _graph: TableRAGGraph | None = PrivateAttr(default=None)

    def example_notes(self, examples: DataExamples) -> dict[str, str]:
        """A question about a real row and column."""
        return {
            "question": (f"E.g. 'What is the {examples.value_column} of {examples.label_value}?'."),
            "tables": f"E.g. [{examples.table_id!r}].",
        }

    def _compiled(self) -> TableRAGGraph:
        if self._graph is None:
            from tablerag_agents.graphs import build_graph

            self._graph = build_graph(self.catalog.resources, index_dir=self.catalog.corpus_path)
        return self._graph

    @engine_errors
    def _run(
        self,
        question: str,
        tables: list[str] | None = None,
        run_manager: CallbackManagerForToolRun | None = None,
    ) -> tuple[str, dict[str, Any]]:
        ids = [self.catalog.get(t).id for t in dict.fromkeys(tables or [])]
        ctx = self.context
        # A one-shot run of its own: not a subgraph of the calling agent's thread.
        config: RunnableConfig = {"callbacks": run_manager.get_child()} if run_manager else {}
        try:
            out = self._compiled().invoke(
                {"question": question, "tables": ids}, config, context=ctx
            )
        except (TableRAGError, ValueError) as exc:
            raise ToolException(f"the question could not be answered: {exc}") from exc
        answer = TableQAResult.from_output(out).answer
        if answer.abstained and answer.error:  # every solver failed: a failed call
            raise ToolException(
                f"no answer: the {answer.solver or 'last'} solver failed: {answer.error}"
            )
        return _answer_text(answer), answer.record()


def _answer_text(answer: GraphAnswer) -> str:
    """The answer, its confidence and the first cited cells, in a few lines."""
    lines = [f"Answer: {answer.text}"]
    if answer.sentence and answer.sentence != answer.text:
        lines.append(answer.sentence)
    lines.append(
        f"Confidence {answer.confidence:.2f} (solver {answer.solver or '-'}; "
        f"tables: {', '.join(answer.table_ids) or '-'})"
    )
    chart = answer.chart
    if chart is not None:
        title = f" {chart.title!r}" if chart.title else ""
        lines.append(
            f"Chart{title}: a {chart.width} x {chart.height} PNG, returned to the user in the "
            "artifact's 'chart'"
        )
        if chart.data is not None:
            rows = "; ".join(
                ", ".join(f"{c}={v}" for c, v in zip(chart.data.columns, row, strict=False))
                for row in chart.data.rows[:MAX_CHART_ROWS_SHOWN]
            )
            rest = chart.data.n_rows - min(len(chart.data.rows), MAX_CHART_ROWS_SHOWN)
            lines.append(f"Chart data: {rows}" + (f" (+{rest} more rows)" if rest > 0 else ""))
    cells = answer.cited_cells
    if cells:
        shown = [
            f"{c.table} row {c.row} {c.column!r} = {c.value!r}" for c in cells[:MAX_CITED_SHOWN]
        ]
        more = f" (+{len(cells) - MAX_CITED_SHOWN} more)" if len(cells) > MAX_CITED_SHOWN else ""
        lines.append("Cited cells: " + "; ".join(shown) + more)
    return "\n".join(lines)
