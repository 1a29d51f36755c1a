"""TableIndex with the real local MiniLM embeddings on a real WTQ table (slow)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablerag_agents.models.tokens import count_tokens
from tablerag_agents.table_index import TableIndex, build_table_context
from tablerag_agents.tables import load_wtq_table


@pytest.mark.slow
def test_semantic_schema_and_cell_search(test_data: Path) -> None:
    table = load_wtq_table(test_data / "wtq_200_0.csv")
    index = TableIndex.build(table, retriever="dense", include_numeric=True)
    columns = index.search_schema(["album chart position in the United Kingdom"], k=1)
    assert columns[0].column == "Chart-Positions UK"
    cells = index.search_cells(["Scheherazade"], k=1)
    assert (cells[0].column, cells[0].value) == ("Title", "Scheherazade and Other Stories")
    context = build_table_context(table, columns, cells)
    assert '- Title: "Scheherazade and Other Stories"' in context
    assert count_tokens(context) < 200
