"""``sql_query``: read-only DuckDB SQL over the tables, in the SQL solver's locked engine.

Every query gets a fresh in-memory DuckDB with external access disabled and
its configuration locked (:class:`~tablerag_agents.solve.sql_engine.SafeDuckDB`):
no files, no network, no extensions, one SELECT statement, a time limit and
capped results. A table that stays in its database or file (``Table.source``)
is queried there instead, in its read-only session
(:class:`~tablerag_agents.solve.sql_engine.SourceSQL`).
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import ToolException
from pydantic import BaseModel, ConfigDict, Field
from tablerag_agents.tools._base import TableTool, engine_errors, frame_payload, frame_text
from tablerag_agents.tools._examples import DataExamples
from tablerag_agents.tools.catalog import TableCatalog

from tablerag_agents.solve.sql_engine import SafeDuckDB, SourceSQL, sql_column_names
from tablerag_agents.solve.sql_repair import quote_bare_columns
from tablerag_agents.tables import Table

_NAME_ERRORS = ("Binder Error", "Catalog Error", "not found", "does not exist")


class SQLQueryInput(BaseModel):
    """Arguments of ``sql_query``."""

    query: str = Field(
        min_length=1,
        description=(
            "One DuckDB SELECT statement. Tables are named by their variable name "
            "(describe_table shows it); quote column names with spaces or symbols in "
            "double quotes."
        ),
    )
    tables: list[str] | None = Field(
        default=None,
        description=(
            "Ids of the tables the query uses. Omit to use every table when there are at most 10."
        ),
    )


class SQLQueryTool(TableTool):
    """Run one read-only SQL query over the tables in a locked-down DuckDB."""

    name: str = "sql_query"
    description: str = (
        "Run one read-only SQL SELECT (DuckDB dialect) over the tables and get the "
        "result rows. Good for filtering, counting, sorting and aggregating. Only "
        "SELECT is allowed; files, network and extensions are disabled."
    )
    args_schema: type[BaseModel] = SQLQueryInput
    catalog: TableCatalog
    """The tables queries can use."""
    timeout_s: float = 5.0
    """Wall-clock limit of one query."""
    max_rows: int = 200
    """Rows returned at most (the model sees the first 20)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def example_notes(self, examples: DataExamples) -> dict[str, str]:
        """A query over a real table that returns a real value."""
        return {
            "query": f"Example: {examples.sql()}",
            "tables": f"E.g. [{examples.table_id!r}].",
        }

    @engine_errors
    def _run(self, query: str, tables: list[str] | None = None) -> tuple[str, dict[str, Any]]:
        named = self.catalog.select(tables)
        engine = _engine(named, self.timeout_s, self.max_rows)
        result = engine.run(query)
        note = ""
        if not result.ok:
            # A small model often leaves "Top scorer (League)" unquoted: quote it and rerun.
            columns = {str(c) for t in named.values() for c in t.df.columns}
            fixed = quote_bare_columns(query, result.error or "", columns)
            retried = engine.run(fixed) if fixed else None
            if fixed and retried is not None and retried.ok:
                query, result = fixed, retried
                note = f"(ran with the column names quoted: {fixed})\n"
        if not result.ok:
            message = f"SQL error ({result.error_type}): {result.error}"
            if any(marker in (result.error or "") for marker in _NAME_ERRORS):
                message += "\n" + _schema_hint(named)
            raise ToolException(message + "\nFix the query and call sql_query again.")
        frame = result.frame()
        text = note + (frame_text(frame) if len(frame) else "(no rows)")
        if result.truncated:
            text += f"\n[result cut at {len(frame)} rows; add LIMIT or aggregate]"
        artifact = {"query": query, **frame_payload(frame), "truncated": result.truncated}
        return text, artifact


def _engine(named: dict[str, Table], timeout_s: float, max_rows: int) -> SafeDuckDB | SourceSQL:
    """The locked DuckDB over the frames, or the one table's own source."""
    sourced = [name for name, t in named.items() if t.source is not None]
    if not sourced:
        frames = {name: t.df for name, t in named.items()}
        return SafeDuckDB(frames, timeout_s=timeout_s, max_rows=max_rows)
    if len(named) > 1:
        raise ToolException(
            f"table {sourced[0]!r} stays in its database or file: query it alone "
            "(tables=[...] with that one id)"
        )
    name, table = next(iter(named.items()))
    assert table.source is not None
    return SourceSQL(table.source, [name, table.id], timeout_s=timeout_s, max_rows=max_rows)


def _schema_hint(named: dict[str, Table]) -> str:
    """List the tables the query can use, with their exact column names."""
    lines = ["Available tables and columns:"]
    for name, table in named.items():
        columns = list(table.df.columns)
        names = columns if table.source is not None else sql_column_names(columns)
        cols = ", ".join(f'"{c}"' for c in names)
        lines.append(f"- {name}: {cols}")
    return "\n".join(lines)
