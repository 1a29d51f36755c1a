"""tablerag-agents: table RAG for LangChain and LangGraph."""

from tablerag_agents.config import Settings
from tablerag_agents.errors import TableLoadError, TableRAGError
from tablerag_agents.tables.model import Table

__all__ = ["Settings", "Table", "TableLoadError", "TableRAGError"]
__version__ = "0.1.0"
