"""Tables in: loaders, dataset readers, representation and rendering for prompts."""

from tablerag_agents.tables.cleaning import TableLoadWarning
from tablerag_agents.tables.limits import LoadLimits
from tablerag_agents.tables.loaders import load_table, load_tables
from tablerag_agents.tables.model import Table
from tablerag_agents.tables.native import load_tabfact_table, load_wtq_table
from tablerag_agents.tables.ottqa import load_ottqa_corpus, ottqa_table
from tablerag_agents.tables.render import render_table
from tablerag_agents.tables.representation import (
    TableRepresentation,
    anonymize_columns,
    represent_table,
    restore_columns,
)

__all__ = [
    "LoadLimits",
    "Table",
    "TableLoadWarning",
    "TableRepresentation",
    "anonymize_columns",
    "represent_table",
    "load_ottqa_corpus",
    "load_tabfact_table",
    "load_table",
    "load_tables",
    "load_wtq_table",
    "ottqa_table",
    "render_table",
    "restore_columns",
]
