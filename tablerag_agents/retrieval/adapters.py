"""Adapter from our ``Retriever`` interface to LangChain's ``BaseRetriever``."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from tablerag_agents.retrieval.base import Hit, Retriever


def hit_to_document(hit: Hit) -> Document:
    """Convert a hit to a LangChain document (score kept in ``metadata["score"]``)."""
    return Document(page_content=hit.text, metadata={**hit.metadata, "score": hit.score}, id=hit.id)


class LangChainRetriever(BaseRetriever):
    """Any tablerag ``Retriever`` usable in LangChain chains (``.invoke(query)``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    retriever: Any = Field(description="The wrapped tablerag Retriever.")
    k: int = Field(default=4, ge=1, description="Number of documents to return.")

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        inner: Retriever = self.retriever
        return [hit_to_document(h) for h in inner.search(query, self.k)]
