"""The tables the tools may see: registered tables and/or one saved corpus index.

Tables are named by id only. A tool argument is never read as a file path, so
a model cannot make a tool open host files.
"""

from __future__ import annotations

import difflib
import keyword
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from langchain_core.tools import ToolException

from tablerag_agents.errors import TableRAGError
from tablerag_agents.solve.base import python_name
from tablerag_agents.tables import Table

if TYPE_CHECKING:
    from tablerag_agents.resources import Resources
    from tablerag_agents.retrieval.corpus import CorpusIndex
    from tablerag_agents.table_index import TableIndex

#: Table ids listed in full in an error message; beyond this, the closest ones.
MAX_LISTED = 30
#: With this many tables or fewer, the code tools load all of them by default.
MAX_DEFAULT_TABLES = 10
#: Names code may not use for a table: the sandbox's and the solvers' own.
RESERVED = frozenset({"pd", "np", "df", "_", *keyword.kwlist})


class TableCatalog:
    """Resolve table ids for the tools; their indexes come from the shared resources.

    Args:
        resources: Models, sandbox, registered tables and the per-table index
            cache (see :class:`~tablerag_agents.resources.Resources`).
        corpus_path: A saved :class:`CorpusIndex` whose tables are also
            available (and searched by ``search_tables``).
    """

    def __init__(self, resources: Resources, *, corpus_path: str | Path | None = None) -> None:
        """Keep the resources; the corpus index is opened on first use."""
        self.resources = resources
        self.corpus_path = Path(corpus_path) if corpus_path is not None else None

    # -- tables -------------------------------------------------------------------------

    def corpus(self) -> CorpusIndex:
        """The searchable corpus: the saved index, else one built over the registered tables."""
        try:
            if self.corpus_path is not None:
                return self.resources.corpus(self.corpus_path)
            return self.resources.registered_corpus()
        except (TableRAGError, ValueError) as exc:
            raise ToolException(f"the table corpus is not available: {exc}") from exc

    def ids(self) -> list[str]:
        """Every table id: registered tables first, then the corpus index's."""
        ids = list(self.resources.table_ids)
        if self.corpus_path is not None:
            known = set(ids)
            ids += [t for t in self.corpus().table_ids() if t not in known]
        return ids

    def get(self, table_id: str) -> Table:
        """Return the table ``table_id``.

        Raises:
            ToolException: Unknown id; the message lists the real ids (or the
                closest ones in a large corpus) so the model can retry.
        """
        if table_id in self.resources.table_ids:
            return self.resources.get_table(table_id)  # an id, never read as a path
        if self.corpus_path is not None and table_id in self.corpus():
            try:
                return self.corpus().get_table(table_id)
            except KeyError:
                raise ToolException(
                    f"table {table_id!r} is indexed but the index stores no table data"
                ) from None
        raise self.unknown(table_id)

    def unknown(self, table_id: str) -> ToolException:
        """The error for an unknown table id, listing what exists."""
        ids = self.ids()
        if not ids:
            return ToolException("no tables are loaded")
        if len(ids) <= MAX_LISTED:
            return ToolException(f"no table {table_id!r}; the tables are: {', '.join(ids)}")
        close = difflib.get_close_matches(table_id, ids, n=5, cutoff=0.3)
        hint = f" Closest ids: {', '.join(close)}." if close else ""
        return ToolException(
            f"no table {table_id!r} among {len(ids)} tables.{hint} "
            "Use search_tables to find table ids."
        )

    def select(self, table_ids: Sequence[str] | None) -> dict[str, Table]:
        """Resolve the tables a code tool loads: ``{variable name: table}``.

        Args:
            table_ids: Ids to load; ``None`` or empty loads every table when
                there are at most :data:`MAX_DEFAULT_TABLES`.

        Raises:
            ToolException: Unknown id, or no ids given for a large catalog.
        """
        if not table_ids:
            ids = self.ids()
            if len(ids) > MAX_DEFAULT_TABLES:
                raise ToolException(
                    f"there are {len(ids)} tables: pass `tables` with the ids to use "
                    "(find them with search_tables)"
                )
            table_ids = ids
        tables = [self.get(t) for t in dict.fromkeys(table_ids)]
        return variable_names(tables)

    # -- per-table schema/cell indexes --------------------------------------------------

    def table_index(self, table: Table, budget: int) -> TableIndex:
        """The schema/cell index of ``table`` under ``budget``.

        Cached by the resources under the table's content, so a table replaced
        under the same id gets a new index (and the graph shares the tools' ones).
        """
        return self.resources.table_index(table, budget=budget)


def variable_names(tables: Sequence[Table]) -> dict[str, Table]:
    """Name tables as Python/SQL identifiers (``"204-csv/590"`` -> ``t_204_csv_590``)."""
    taken = set(RESERVED)
    named: dict[str, Table] = {}
    for table in tables:
        name = python_name(table.id, taken)
        taken.add(name)
        named[name] = table
    return named


def variable_name(table_id: str) -> str:
    """The variable/SQL name a table gets when it is loaded first."""
    return python_name(table_id, set(RESERVED))
