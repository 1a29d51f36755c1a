"""Clarify stage (Wu, TableRAG): term explanations and Wikipedia background for a table."""

from tablerag_agents.clarify.offline_wiki import OfflineWikipedia, normalize_title
from tablerag_agents.clarify.provider import get_wikipedia_provider
from tablerag_agents.clarify.summary import (
    header_query,
    split_sentences,
    table_summary,
)
from tablerag_agents.clarify.terms import Clarification, clarify_terms, parse_explanations
from tablerag_agents.clarify.wiki import (
    FallbackWikipedia,
    OnlineWikipedia,
    WikiPage,
    WikipediaProvider,
    detokenize,
    truncate_text,
)

__all__ = [
    "Clarification",
    "FallbackWikipedia",
    "OfflineWikipedia",
    "OnlineWikipedia",
    "WikiPage",
    "WikipediaProvider",
    "clarify_terms",
    "detokenize",
    "get_wikipedia_provider",
    "header_query",
    "normalize_title",
    "parse_explanations",
    "split_sentences",
    "table_summary",
    "truncate_text",
]
