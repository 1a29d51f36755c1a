"""``describe_table``: size, columns with types and examples, and the first rows of a table."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from tablerag_agents.tools._base import TableTool, engine_errors, frame_payload, frame_text
from tablerag_agents.tools._examples import DataExamples
from tablerag_agents.tools.catalog import TableCatalog, variable_name

from tablerag_agents.tables.representation import summarize_column


class DescribeTableInput(BaseModel):
    """Arguments of ``describe_table``."""

    table: str = Field(
        description=(
            "Id of the table, exactly as search_tables, this description or an error "
            "message lists it."
        )
    )
    sample_rows: int = Field(
        default=5, ge=0, le=50, description="How many of the first rows to show (0 to 50)."
    )


class DescribeTableTool(TableTool):
    """Describe one table: size, columns (type, distinct values, examples), first rows."""

    name: str = "describe_table"
    description: str = (
        "Show a table's size, its exact column names with their types, number of "
        "distinct values and example values, and its first rows. Use it before writing "
        "Python or SQL so you use the real column names. Input: a table id."
    )
    args_schema: type[BaseModel] = DescribeTableInput
    catalog: TableCatalog
    """The tables this tool can describe."""
    max_examples: int = 3
    """Example values shown per column."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def example_notes(self, examples: DataExamples) -> dict[str, str]:
        """List the tables (when few) and quote a real id."""
        notes = {"table": f"E.g. {examples.table_id!r}."}
        if examples.listed:
            notes[""] = f"The tables: {', '.join(examples.listed)}."
        return notes

    @engine_errors
    def _run(self, table: str, sample_rows: int = 5) -> tuple[str, dict[str, Any]]:
        found = self.catalog.get(table)
        df = found.df
        columns = [
            summarize_column(df.iloc[:, i], str(df.columns[i]), max_values=self.max_examples)
            for i in range(df.shape[1])
        ]
        var = variable_name(found.id)
        lines = [
            f"Table {found.id!r}: {found.caption or found.id}",
            f"Size: {found.n_rows} rows x {found.n_cols} columns",
            f"In python_sandbox and sql_query it is `{var}` (and `df` in Python when "
            "loaded first).",
            "Columns (name: type, distinct values, examples):",
        ]
        if found.source is not None:  # a database table or a file scanned in place
            lines.insert(
                -1,
                f"Column summaries come from its first {len(df)} rows only; "
                "sql_query runs on every row.",
            )
        for col in columns:
            examples = ", ".join(repr(v) for v in col.values)
            missing = f", {col.n_missing} missing" if col.n_missing else ""
            lines.append(
                f"- {col.original!r}: {col.dtype}, {col.n_unique} distinct{missing}; {examples}"
            )
        if sample_rows:
            lines += [
                f"First {min(sample_rows, found.n_rows)} rows:",
                frame_text(df.head(sample_rows)),
            ]
        artifact = {
            "table_id": found.id,
            "caption": found.caption,
            "variable": var,
            "n_rows": found.n_rows,
            "n_cols": found.n_cols,
            "columns": [
                {
                    "name": c.original,
                    "dtype": c.dtype,
                    "n_unique": c.n_unique,
                    "n_missing": c.n_missing,
                    "examples": c.values,
                }
                for c in columns
            ],
            "sample": frame_payload(df.head(sample_rows)),
        }
        return "\n".join(lines), artifact
