"""LangChain tools over the tablerag-agents engine, and the toolkit that builds them.

Example:
    >>> from langchain.agents import create_agent
    >>> from tablerag_agents.tools import TableRAGToolkit
    >>> with TableRAGToolkit.from_folder("tables/") as toolkit:
    ...     agent = create_agent(model, toolkit.get_tools())
"""

from tablerag_agents.tools._base import TableTool, frame_payload, frame_text, jsonable
from tablerag_agents.tools._namespace import NamespaceStore
from tablerag_agents.tools.ask_tables import AskTablesInput, AskTablesTool
from tablerag_agents.tools.catalog import TableCatalog
from tablerag_agents.tools.clarify_terms import ClarifyTermsInput, ClarifyTermsTool
from tablerag_agents.tools.describe_table import DescribeTableInput, DescribeTableTool
from tablerag_agents.tools.filter_table import FilterTableInput, FilterTableTool
from tablerag_agents.tools.python_sandbox import PythonSandboxInput, PythonSandboxTool
from tablerag_agents.tools.retrieve_table_context import (
    RetrieveTableContextInput,
    RetrieveTableContextTool,
)
from tablerag_agents.tools.search_tables import SearchTablesInput, SearchTablesTool
from tablerag_agents.tools.sql_query import SQLQueryInput, SQLQueryTool
from tablerag_agents.tools.toolkit import TableRAGToolkit
from tablerag_agents.tools.wikipedia_summary import WikipediaSummaryInput, WikipediaSummaryTool

__all__ = [
    "AskTablesInput",
    "AskTablesTool",
    "ClarifyTermsInput",
    "ClarifyTermsTool",
    "FilterTableInput",
    "FilterTableTool",
    "WikipediaSummaryInput",
    "WikipediaSummaryTool",
    "DescribeTableInput",
    "DescribeTableTool",
    "NamespaceStore",
    "PythonSandboxInput",
    "PythonSandboxTool",
    "RetrieveTableContextInput",
    "RetrieveTableContextTool",
    "SQLQueryInput",
    "SQLQueryTool",
    "SearchTablesInput",
    "SearchTablesTool",
    "TableCatalog",
    "TableRAGToolkit",
    "TableTool",
    "frame_payload",
    "frame_text",
    "jsonable",
]
