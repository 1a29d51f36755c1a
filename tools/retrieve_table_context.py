"""``retrieve_table_context``: the columns and cell values of a (huge) table relevant to a question.

TableRAG's (Chen et al.) schema + cell retrieval under a budget: the prompt text stays about
the same size whether the table has a hundred cells or a million.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from tablerag_agents.tools._base import TableTool, engine_errors
from tablerag_agents.tools._examples import DataExamples
from tablerag_agents.tools.catalog import TableCatalog

from tablerag_agents.table_index import build_table_context
from tablerag_agents.table_index.cells import DEFAULT_BUDGET


class RetrieveTableContextInput(BaseModel):
    """Arguments of ``retrieve_table_context``."""

    table: str = Field(description="Id of the table.")
    question: str = Field(min_length=1, description="The question to find columns and cells for.")
    keywords: list[str] = Field(
        default_factory=list,
        max_length=10,
        description=(
            "Optional extra search terms: column topics or cell values you expect. Each "
            "is searched besides the question."
        ),
    )
    top_k: int = Field(
        default=5, ge=1, le=20, description="Columns and cell values kept per search term."
    )


class RetrieveTableContextTool(TableTool):
    """Retrieve the relevant schema and cells of a table, within a token budget."""

    name: str = "retrieve_table_context"
    description: str = (
        "For a large table, retrieve only what a question needs: the relevant columns "
        "(exact names, types, examples, ranges) and the cell values that match the "
        "question or keywords, e.g. the exact spelling of a name in the table. "
        "Use it instead of reading a big table; then write Python or SQL with the "
        "names and values it shows."
    )
    args_schema: type[BaseModel] = RetrieveTableContextInput
    catalog: TableCatalog
    """The tables; built indexes are cached by the resources per table content."""
    budget: int = DEFAULT_BUDGET
    """Cell budget ``B``: at most this many distinct cells are indexed per table."""
    max_schema: int = 10
    """Columns shown at most."""
    max_cells: int = 30
    """Cell values shown at most."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def example_notes(self, examples: DataExamples) -> dict[str, str]:
        """A real table id, column name and cell value."""
        return {
            "table": f"E.g. {examples.table_id!r}.",
            "keywords": f"E.g. [{examples.value_column!r}, {examples.label_value!r}].",
        }

    @engine_errors
    def _run(
        self, table: str, question: str, keywords: list[str] | None = None, top_k: int = 5
    ) -> tuple[str, dict[str, Any]]:
        found = self.catalog.get(table)
        index = self.catalog.table_index(found, self.budget)
        queries = [question, *(keywords or [])]
        schema = index.search_schema(queries, k=top_k, limit=self.max_schema)
        cells = index.search_cells(queries, k=top_k, limit=self.max_cells)
        text = build_table_context(
            found, schema, cells, max_schema=self.max_schema, max_cells=self.max_cells
        )
        artifact = {
            "table_id": found.id,
            "n_rows": found.n_rows,
            "n_cols": found.n_cols,
            "schema": [entry.to_dict() for entry in schema],
            "cells": [{"column": c.column, "value": c.value, "count": c.count} for c in cells],
            "context": text,
        }
        return text, artifact
