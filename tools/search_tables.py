"""``search_tables``: find the tables of a corpus that can answer a question."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.tools import ToolException
from pydantic import BaseModel, ConfigDict, Field
from tablerag_agents.tools._base import TableTool, engine_errors
from tablerag_agents.tools._examples import DataExamples
from tablerag_agents.tools.catalog import TableCatalog

from tablerag_agents.retrieval.corpus_folder import hit_dict

#: Column names listed per hit in the text for the model.
MAX_COLUMNS_SHOWN = 12


class SearchTablesInput(BaseModel):
    """Arguments of ``search_tables``."""

    query: str = Field(
        min_length=1,
        description=("The question or keywords to find tables for."),
    )
    k: int = Field(default=5, ge=1, le=20, description="How many tables to return (1 to 20).")


class SearchTablesTool(TableTool):
    """Search the table corpus (hybrid BM25 + dense retrieval) for a question."""

    name: str = "search_tables"
    description: str = (
        "Find the tables most likely to answer a question. Returns, best first, each "
        "table's id, title, columns and relevance score. Pass a returned id to "
        "describe_table, python_sandbox or sql_query."
    )
    args_schema: type[BaseModel] = SearchTablesInput
    catalog: TableCatalog
    """The tables and the corpus index searched."""
    method: Literal["hybrid", "bm25", "bm25_fields", "dense", "rows", "colbert", "rrf"] = "hybrid"
    """Search method of the corpus index (``hybrid`` fuses every channel)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def example_notes(self, examples: DataExamples) -> dict[str, str]:
        """Keywords made of a real cell value and column name."""
        return {"query": f"E.g. '{examples.label_value} {examples.value_column}'."}

    @engine_errors
    def _run(self, query: str, k: int = 5) -> tuple[str, list[dict[str, Any]]]:
        index = self.catalog.corpus()
        hits = index.search(query, k=k, method=self.method)
        results = []
        for hit in hits:
            item = hit_dict(hit)
            try:
                table = self.catalog.get(hit.table_id)
            except ToolException:  # an index without table data still has hits
                item |= {"title": hit.caption or hit.table_id, "columns": [], "n_rows": None}
            else:
                item |= {
                    "title": table.caption or table.id,
                    "columns": [str(c) for c in table.df.columns],
                    "n_rows": table.n_rows,
                }
            results.append(item)
        if not results:
            return f"No table matches {query!r}; try other keywords.", results
        lines = []
        for rank, item in enumerate(results, start=1):
            cols = item["columns"]
            shown = ", ".join(cols[:MAX_COLUMNS_SHOWN]) + (
                " ..." if len(cols) > MAX_COLUMNS_SHOWN else ""
            )
            size = f", {item['n_rows']} rows" if item["n_rows"] is not None else ""
            lines.append(
                f"{rank}. id={item['table_id']!r} title={item['title']!r} "
                f"score={item['score']:.3f}{size}; columns: {shown or '(unknown)'}"
            )
        return "\n".join(lines), results
