"""``wikipedia_summary``: background on a topic or a table's subject from Wikipedia (Wu, TableRAG).

The provider follows the settings: the live site (``online``), a local corpus
of page intros (``offline``), or the site then the corpus (``auto``).
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import ToolException
from pydantic import BaseModel, ConfigDict, Field, model_validator
from tablerag_agents.tools._base import TableTool, engine_errors
from tablerag_agents.tools._examples import DataExamples
from tablerag_agents.tools.catalog import TableCatalog

from tablerag_agents.errors import TableRAGError


class WikipediaSummaryInput(BaseModel):
    """Arguments of ``wikipedia_summary``: a topic, a table, or both."""

    topic: str | None = Field(
        default=None,
        description="Page title or topic.",
    )
    table: str | None = Field(
        default=None,
        description="Id of a table: its title (else its column names) is looked up.",
    )
    max_chars: int = Field(
        default=600, ge=100, le=3000, description="Longest summary returned (100 to 3000)."
    )

    @model_validator(mode="after")
    def _one_of(self) -> WikipediaSummaryInput:
        if not (self.topic or "").strip() and not self.table:
            raise ValueError("give a topic or a table id")
        return self


class WikipediaSummaryTool(TableTool):
    """Fetch the intro of the Wikipedia page about a topic or a table's subject."""

    name: str = "wikipedia_summary"
    description: str = (
        "Get background from Wikipedia: the intro of the page about a topic, or about "
        "a table's subject (found from its title or column names). Use it to "
        "understand what a table is about; answer from the table, not from this."
    )
    args_schema: type[BaseModel] = WikipediaSummaryInput
    catalog: TableCatalog
    """The tables; the Wikipedia provider comes from its resources (settings)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def example_notes(self, examples: DataExamples) -> dict[str, str]:
        """A real cell value as a topic, a real table id."""
        return {
            "topic": f"E.g. {examples.label_value!r}.",
            "table": f"E.g. {examples.table_id!r}.",
        }

    @engine_errors
    def _run(
        self, topic: str | None = None, table: str | None = None, max_chars: int = 600
    ) -> tuple[str, dict[str, Any]]:
        from tablerag_agents.clarify import table_summary

        headers: list[str] = []
        caption = (topic or "").strip()
        if table:
            found = self.catalog.get(table)
            headers = [str(c) for c in found.df.columns]
            caption = caption or (found.caption if found.caption != found.id else "")
        if self.catalog.resources.settings.wikipedia == "off":
            raise ToolException("Wikipedia lookups are switched off (setting wikipedia='off')")
        try:
            page = table_summary(
                caption, headers, self.catalog.resources.wikipedia, max_chars=max_chars
            )
        except (TableRAGError, OSError) as exc:  # no corpus, or offline for the live site
            raise ToolException(f"Wikipedia is not available: {exc}") from exc
        if page is None:
            looked = repr(caption) if caption else "the table's column names"
            raise ToolException(
                f"no Wikipedia page found for {looked}; try the exact page title or a shorter topic"
            )
        return f"{page.title} ({page.url}):\n{page.text}", page.model_dump()
