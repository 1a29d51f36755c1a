"""Per-table schema and cell databases under a budget, and the TableRAG prompt context."""

from tablerag_agents.table_index.cells import CellDatabase, CellEntry, build_cell_db
from tablerag_agents.table_index.prompt import build_table_context
from tablerag_agents.table_index.schema import SchemaEntry, build_schema
from tablerag_agents.table_index.table_index import TableIndex

__all__ = [
    "CellDatabase",
    "CellEntry",
    "SchemaEntry",
    "TableIndex",
    "build_cell_db",
    "build_schema",
    "build_table_context",
]
