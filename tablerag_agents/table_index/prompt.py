"""TableRAG prompt context: a compact view of a table whose size does not grow with it.

The context holds the caption, the table size, the retrieved schema entries
(one JSON line each, with examples and ranges) and the retrieved cell values
grouped by column. Its length is bounded by the number of hits and the value
caps, never by the number of rows, so a million-cell table gives about the
same prompt as a hundred-cell one for the same question.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from tablerag_agents.table_index.cells import CellEntry
from tablerag_agents.table_index.schema import SchemaEntry
from tablerag_agents.tables.model import Table
from tablerag_agents.tables.values import clip

#: Longest caption kept in the context.
MAX_CAPTION_CHARS = 200


def build_table_context(
    table: Table,
    schema_hits: Sequence[SchemaEntry],
    cell_hits: Sequence[CellEntry],
    *,
    max_value_chars: int = 50,
    max_examples: int = 3,
    max_schema: int | None = 10,
    max_cells: int | None = 30,
) -> str:
    """Assemble the retrieved schema and cells of ``table`` into prompt text.

    Args:
        table: The table (caption and size are shown; no rows are).
        schema_hits: Retrieved columns, best first.
        cell_hits: Retrieved cell values, best first.
        max_value_chars: Longest value text shown.
        max_examples: Example values shown per column.
        max_schema: Cap on schema entries shown (``None``: all hits). With the
            caps the context stays bounded even for many expanded queries.
        max_cells: Cap on cell values shown (``None``: all hits).

    Returns:
        Text such as::

            Table: Olympic medal table
            Size: 120 rows x 6 columns
            Relevant columns:
            {"column_name": "Nation", "dtype": "text", "n_unique": 120, "examples": [...]}
            Relevant cell values (column: values):
            - Nation: "France", "Germany"
    """
    caption = clip(" ".join((table.caption or table.id).split()), MAX_CAPTION_CHARS)
    lines = [f"Table: {caption}", f"Size: {table.n_rows} rows x {table.n_cols} columns"]
    schema = list(schema_hits)[:max_schema]
    lines.append("Relevant columns:" if schema else "Relevant columns: (none retrieved)")
    for entry in schema:
        lines.append(_schema_line(entry, max_value_chars, max_examples))
    cells = list(cell_hits)[:max_cells]
    if cells:
        lines.append("Relevant cell values (column: values):")
        grouped: dict[str, list[str]] = {}
        for cell in cells:
            value = json.dumps(clip(cell.value, max_value_chars), ensure_ascii=False)
            grouped.setdefault(cell.column, []).append(value)
        for column, values in grouped.items():
            lines.append(f"- {column}: {', '.join(values)}")
    else:
        lines.append("Relevant cell values: (none retrieved)")
    return "\n".join(lines)


def _schema_line(entry: SchemaEntry, max_chars: int, max_examples: int) -> str:
    data: dict[str, object] = {
        "column_name": entry.column,  # never cut: code must use the exact name
        "dtype": entry.dtype,
        "n_unique": entry.n_unique,
        "examples": [clip(v, max_chars) for v in entry.examples[:max_examples]],
    }
    if entry.min is not None:
        data["min"] = clip(entry.min, max_chars)
        data["max"] = clip(entry.max or "", max_chars)
    return json.dumps(data, ensure_ascii=False)
