"""Run model-written SQL over DataFrames in a locked-down, throwaway DuckDB.

The security boundary is DuckDB's own configuration: every query gets a fresh
in-memory connection with ``enable_external_access=false`` (no files, no
network, no extension install/load), extension autoloading off, no spill
directory, a memory and thread limit, and ``lock_configuration=true`` so the
query cannot turn any of that back on. A timer thread interrupts queries that
run too long, and results are capped in rows and cells. Checking that the text
is a single SELECT is only a courtesy that gives the model a clear error.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pandas as pd

from tablerag_agents.errors import TableRAGError
from tablerag_agents.tables.sql_safety import DUCKDB_UNTRUSTED_CONFIG, quote_ident


class SQLRejectedError(TableRAGError):
    """The SQL text is not a single read-only query."""

    def __init__(self, sql: str, reason: str) -> None:
        self.sql = sql
        self.reason = reason
        super().__init__(f"SQL rejected: {reason}")


def sql_column_names(columns: list[Any]) -> list[str]:
    """Return unique, non-empty column names for SQL (``""`` -> ``col3``, dupes -> ``x_2``)."""
    out: list[str] = []
    for i, col in enumerate(columns):
        name = str(col).strip() or f"col{i + 1}"
        base, n = name, 2
        while name in out:
            name, n = f"{base}_{n}", n + 1
        out.append(name)
    return out


def check_read_only(sql: str) -> str:
    """Return ``sql`` if it is exactly one SELECT statement, else raise.

    Raises:
        SQLRejectedError: Empty text, several statements, or a non-SELECT
            statement (COPY, ATTACH, INSTALL, PRAGMA, SET...).
    """
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise SQLRejectedError(sql, f"syntax error: {exc}") from exc
    if len(statements) != 1:
        raise SQLRejectedError(sql, f"expected one statement, got {len(statements)}")
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        raise SQLRejectedError(sql, f"only SELECT queries are allowed, not {kind.name}")
    return sql


@dataclass
class SQLResult:
    """Outcome of one query: rows (capped) or an error."""

    ok: bool
    columns: list[str] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    truncated: bool = False
    error: str | None = None
    error_type: str | None = None
    timed_out: bool = False
    seconds: float = 0.0

    def frame(self) -> pd.DataFrame:
        """Return the rows as a DataFrame (duplicate names made unique)."""
        return pd.DataFrame(self.rows, columns=sql_column_names(list(self.columns)))

    def observation(self, max_rows: int = 20, max_chars: int = 1500) -> str:
        """Text for the model: the result table, or the error."""
        if not self.ok:
            return f"Error ({self.error_type}): {self.error}"
        if not self.rows:
            return "(no rows)"
        lines = [" | ".join(self.columns)]
        lines += [" | ".join(_fmt(v) for v in row) for row in self.rows[:max_rows]]
        more = len(self.rows) - max_rows
        if more > 0 or self.truncated:
            lines.append(f"... ({'more than ' if self.truncated else ''}{len(self.rows)} rows)")
        text = "\n".join(lines)
        return text if len(text) <= max_chars else text[: max_chars - 3] + "..."


def _fmt(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "NULL" if value is None else str(value)


class SafeDuckDB:
    """Run read-only SQL over a fixed set of DataFrames, one fresh connection per query.

    Args:
        tables: Table name -> DataFrame; each becomes an in-memory table.
        timeout_s: Wall-clock limit per query.
        max_rows: Maximum rows returned.
        max_cells: Maximum cells (rows x columns) returned.
        memory_limit: DuckDB memory limit.
        aliases: Extra name -> table name; each becomes a view (e.g. the table id
            beside the short name ``t``).
    """

    def __init__(
        self,
        tables: dict[str, pd.DataFrame],
        *,
        timeout_s: float = 5.0,
        max_rows: int = 200,
        max_cells: int = 5000,
        memory_limit: str = "512MB",
        aliases: dict[str, str] | None = None,
    ) -> None:
        """Keep copies of the tables with SQL-safe unique column names."""
        self.tables: dict[str, pd.DataFrame] = {}
        for name, df in tables.items():
            frame = df.copy()
            frame.columns = sql_column_names(list(frame.columns))
            self.tables[name] = frame
        self.aliases = {a: n for a, n in (aliases or {}).items() if a not in self.tables}
        unknown = set(self.aliases.values()) - set(self.tables)
        if unknown:
            raise ValueError(f"aliases point to unknown tables {sorted(unknown)}")
        self.timeout_s = timeout_s
        self.max_rows = max_rows
        self.max_cells = max_cells
        self.memory_limit = memory_limit

    def _connect(self) -> duckdb.DuckDBPyConnection:
        config = dict(
            DUCKDB_UNTRUSTED_CONFIG,
            lock_configuration=True,
            threads=1,
            memory_limit=self.memory_limit,
        )
        con = duckdb.connect(":memory:", config=config)
        for i, (name, frame) in enumerate(self.tables.items()):
            view = f"__src_{i}"
            con.register(view, frame)
            con.execute(f"CREATE TABLE {quote_ident(name)} AS SELECT * FROM {view}")
            con.unregister(view)
        for alias, name in self.aliases.items():
            con.execute(f"CREATE VIEW {quote_ident(alias)} AS SELECT * FROM {quote_ident(name)}")
        return con

    def run(self, sql: str) -> SQLResult:
        """Run one SELECT; errors, rejections and timeouts come back as a failed result."""
        started = time.perf_counter()
        sql = sql.strip().rstrip(";").strip()
        try:
            check_read_only(sql)
        except SQLRejectedError as exc:
            return SQLResult(ok=False, error=exc.reason, error_type="SQLRejectedError")
        con = self._connect()
        timer = threading.Timer(self.timeout_s, con.interrupt)
        timer.start()
        try:
            cursor = con.execute(sql)
            columns = [d[0] for d in cursor.description or []]
            limit = max(1, min(self.max_rows, self.max_cells // max(1, len(columns))))
            rows = cursor.fetchmany(limit + 1)
            return SQLResult(
                ok=True,
                columns=columns,
                rows=[tuple(r) for r in rows[:limit]],
                truncated=len(rows) > limit,
                seconds=time.perf_counter() - started,
            )
        except duckdb.InterruptException:
            return SQLResult(
                ok=False,
                error=f"query exceeded the {self.timeout_s:g}s time limit",
                error_type="Timeout",
                timed_out=True,
                seconds=time.perf_counter() - started,
            )
        except duckdb.Error as exc:
            message = str(exc).split("\n\nLINE")[0].strip()
            return SQLResult(
                ok=False,
                error=message[:500],
                error_type=type(exc).__name__,
                seconds=time.perf_counter() - started,
            )
        finally:
            timer.cancel()
            con.close()
