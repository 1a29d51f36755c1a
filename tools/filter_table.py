"""``filter_table``: the rows and columns a question needs (Wu, TableRAG; Lee et al., PieTa)."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.tools import ToolException
from pydantic import BaseModel, ConfigDict, Field
from tablerag_agents.tools._base import TableTool, engine_errors, frame_payload, frame_text
from tablerag_agents.tools._examples import DataExamples
from tablerag_agents.tools.catalog import TableCatalog

from tablerag_agents.errors import SandboxError, SandboxUnavailableError
from tablerag_agents.filtering.llm_filter import Vote

FilterMethod = Literal["semantic", "semantic_maxsim", "llm", "pieta"]


class FilterTableInput(BaseModel):
    """Arguments of ``filter_table``."""

    table: str = Field(description="Id of the table to filter.")
    question: str = Field(min_length=1, description="The question the kept rows must answer.")
    method: FilterMethod = Field(
        default="semantic",
        description=(
            "'semantic' (fast: rows and columns most similar to the question), "
            "'semantic_maxsim' (word-level similarity), 'llm' (the chat model writes "
            "filter code 5 times, the majority sub-table wins; slower, precise) or "
            "'pieta' (the chat model picks cells window by window; slowest)."
        ),
    )
    top_rows: int = Field(
        default=10, ge=1, le=100, description="Rows the semantic filters keep (1 to 100)."
    )
    top_columns: int = Field(
        default=8, ge=1, le=50, description="Columns the semantic filters keep (1 to 50)."
    )


class FilterTableTool(TableTool):
    """Narrow a table to the rows and columns relevant to a question."""

    name: str = "filter_table"
    description: str = (
        "Shrink a table to the rows and columns relevant to a question and show them, "
        "with each row's original index. Use it to read a long table without reading "
        "every row. The filter is conservative: if unsure it keeps the whole table and "
        "says so."
    )
    args_schema: type[BaseModel] = FilterTableInput
    catalog: TableCatalog
    """The tables; the chat model, embeddings and sandbox come from its resources."""
    samples: int = 5
    """Sampled programs of the ``llm`` filter (self-consistency)."""
    vote: Vote = "subtable"
    """How the ``llm`` filter combines its programs: ``subtable`` or ``columns``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def example_notes(self, examples: DataExamples) -> dict[str, str]:
        """A real table id."""
        return {"table": f"E.g. {examples.table_id!r}."}

    @engine_errors
    def _run(
        self,
        table: str,
        question: str,
        method: FilterMethod = "semantic",
        top_rows: int = 10,
        top_columns: int = 8,
    ) -> tuple[str, dict[str, Any]]:
        from tablerag_agents import filtering

        found = self.catalog.get(table)
        res = self.catalog.resources
        df = found.df
        if df.empty:
            raise ToolException(f"table {table!r} has no rows to filter")
        try:
            if method in ("semantic", "semantic_maxsim"):
                sub = filtering.semantic_filter(
                    question,
                    df,
                    res.embeddings,
                    top_rows=top_rows,
                    top_columns=top_columns,
                    scorer="maxsim" if method == "semantic_maxsim" else "dense",
                )
            elif method == "llm":
                sub = filtering.llm_filter(
                    question, df, res.chat_model, res.sandbox, samples=self.samples, vote=self.vote
                )
            else:
                sub = filtering.pieta_filter(question, df, res.chat_model, embeddings=None)
        except ValueError as exc:  # e.g. maxsim with embeddings that have no token vectors
            raise ToolException(f"filter {method!r} cannot run here: {exc}") from exc
        except (SandboxError, SandboxUnavailableError) as exc:
            raise ToolException(f"the sandbox could not run the filter: {exc}") from exc
        part = sub.apply(df)
        head = f"Kept {len(sub.rows)} of {len(df)} rows and {len(sub.columns)} of {df.shape[1]} "
        head += f"columns ({sub.method})."
        if sub.fallback:
            head += f" The filter kept the whole table: {sub.reason}."
        artifact = {
            "table_id": found.id,
            **sub.model_dump(include={"rows", "columns", "method", "fallback", "reason"}),
            "data": frame_payload(part),
        }
        return f"{head}\n{frame_text(part)}", artifact
