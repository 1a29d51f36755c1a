"""``clarify_terms``: explain the abbreviations and ambiguous terms of a question (Wu, TableRAG)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from tablerag_agents.tools._base import TableTool, engine_errors
from tablerag_agents.tools._examples import DataExamples
from tablerag_agents.tools.catalog import TableCatalog


class ClarifyTermsInput(BaseModel):
    """Arguments of ``clarify_terms``."""

    question: str = Field(min_length=1, description="The question with the unclear terms.")
    table: str | None = Field(
        default=None,
        description=(
            "Id of the table the question is about: its column names and title are "
            "explained too. Optional."
        ),
    )


class ClarifyTermsTool(TableTool):
    """Explain unusual terms in a question and a table's headers, without answering it."""

    name: str = "clarify_terms"
    description: str = (
        "Explain abbreviations and ambiguous terms in a question and in a table's "
        "column names (e.g. 'GP' = games played). Only terms that literally appear "
        "are explained; it never answers the question."
    )
    args_schema: type[BaseModel] = ClarifyTermsInput
    catalog: TableCatalog
    """The tables; the chat model comes from its resources."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def example_notes(self, examples: DataExamples) -> dict[str, str]:
        """A real table id."""
        return {"table": f"E.g. {examples.table_id!r}."}

    @engine_errors
    def _run(self, question: str, table: str | None = None) -> tuple[str, dict[str, Any]]:
        from tablerag_agents.clarify import clarify_terms

        headers: list[str] = []
        caption = ""
        if table:
            found = self.catalog.get(table)
            headers, caption = [str(c) for c in found.df.columns], found.caption
        result = clarify_terms(
            question, headers, self.catalog.resources.chat_model, caption=caption
        )
        text = result.text or "No unusual terms to explain: the words mean what they say."
        return text, {"terms": dict(result.terms)}
