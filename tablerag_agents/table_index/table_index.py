"""Schema + cell index of ONE table (Chen et al., TableRAG), searched with several expanded queries.

Build once per table (cheap: one ``value_counts`` per column, then embedding at
most ``B`` cells plus one text per column), then call :meth:`TableIndex.search_schema`
and :meth:`TableIndex.search_cells` with the query list an LLM expansion step
produced. Any :class:`~tablerag_agents.retrieval.base.Retriever` works: pass a
``retriever_factory`` or choose ``retriever="dense" | "bm25" | "hybrid"``.
Not persisted: re-indexing one table is fast.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeVar

from tablerag_agents.retrieval.base import Doc, Hit, Retriever
from tablerag_agents.table_index.cells import (
    DEFAULT_BUDGET,
    Allocation,
    CellDatabase,
    CellEntry,
    build_cell_db,
    cell_db_from_profiles,
)
from tablerag_agents.table_index.schema import SchemaEntry, build_schema, schema_from_profiles
from tablerag_agents.tables.model import Table
from tablerag_agents.tables.source import ProfileRequest

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

logger = logging.getLogger(__name__)

RetrieverKind = Literal["dense", "bm25", "hybrid"]
RetrieverFactory = Callable[[], Retriever]
E = TypeVar("E", SchemaEntry, CellEntry)


def default_retriever_factory(
    kind: RetrieverKind = "dense", embeddings: Embeddings | None = None
) -> RetrieverFactory:
    """Return a factory of fresh retrievers of ``kind`` (dense needs ``embeddings``)."""
    if kind not in ("dense", "bm25", "hybrid"):
        raise ValueError(f"unknown retriever {kind!r}; use 'dense', 'bm25' or 'hybrid'")
    if kind != "bm25" and embeddings is None:
        from tablerag_agents.models.embeddings import get_embeddings

        embeddings = get_embeddings()

    def make() -> Retriever:
        from tablerag_agents.retrieval.bm25 import BM25Retriever

        if kind == "bm25":
            return BM25Retriever()
        from tablerag_agents.retrieval.dense import DenseRetriever

        dense = DenseRetriever(embeddings)
        if kind == "dense":
            return dense
        from tablerag_agents.retrieval.hybrid import HybridRetriever

        return HybridRetriever([dense, BM25Retriever()])

    return make


@dataclass
class BuildStats:
    """Where build time went (seconds) and how big the index is."""

    extract_s: float = 0.0
    schema_index_s: float = 0.0
    cell_index_s: float = 0.0
    n_schema: int = 0
    n_cells: int = 0
    n_distinct: int = 0
    skipped_columns: dict[str, str] = field(default_factory=dict)

    @property
    def total_s(self) -> float:
        """Total build time."""
        return self.extract_s + self.schema_index_s + self.cell_index_s


class TableIndex:
    """Schema and cell retrievers over one table."""

    def __init__(
        self,
        table: Table,
        schema: Sequence[SchemaEntry],
        cells: CellDatabase,
        schema_retriever: Retriever,
        cell_retriever: Retriever,
        stats: BuildStats | None = None,
    ) -> None:
        """Wrap already-filled retrievers; use :meth:`build` to make one from a table."""
        self.table = table
        self.schema = list(schema)
        self.cells = cells
        self.schema_retriever = schema_retriever
        self.cell_retriever = cell_retriever
        self.stats = stats or BuildStats()
        self._schema_by_id = {_schema_id(i): e for i, e in enumerate(self.schema)}
        self._cell_by_id = {_cell_id(i): e for i, e in enumerate(cells.entries)}

    @classmethod
    def build(
        cls,
        table: Table,
        embeddings: Embeddings | None = None,
        *,
        budget: int = DEFAULT_BUDGET,
        allocation: Allocation = "fair",
        retriever: RetrieverKind = "dense",
        retriever_factory: RetrieverFactory | None = None,
        max_examples: int = 3,
        max_value_chars: int = 100,
        categorical_limit: int = 20,
        include_numeric: bool = False,
    ) -> TableIndex:
        """Extract the schema and cell databases of ``table`` and index them.

        A table with a :attr:`~tablerag_agents.tables.model.Table.source` (a database
        table, a file scanned out of core) is profiled where it lives: only
        aggregates and the kept values come back, never its rows.

        Args:
            table: The table.
            embeddings: For dense/hybrid retrieval (default: the configured
                embeddings, local MiniLM unless set otherwise).
            budget: Cell budget ``B`` (see :mod:`tablerag_agents.table_index.cells`).
            allocation: ``"fair"`` per-column water-filling or ``"global"``.
            retriever: Which retriever to use when no factory is given.
            retriever_factory: Makes one empty retriever per database.
            max_examples: Example values per schema entry.
            max_value_chars: Longest cell value indexed (longer is free text).
            categorical_limit: Non-text columns with at most this many distinct
                values go in the cell database.
            include_numeric: Put every numeric column in the cell database.
        """
        factory = retriever_factory or default_retriever_factory(retriever, embeddings)
        stats = BuildStats()
        t0 = time.perf_counter()
        if table.source is not None:  # aggregates pushed down to the database or file
            profiles = table.source.profile(
                ProfileRequest(
                    budget=budget,
                    max_examples=max_examples,
                    max_value_chars=max_value_chars,
                    categorical_limit=categorical_limit,
                    include_numeric=include_numeric,
                )
            )
            schema = schema_from_profiles(profiles)
            cells = cell_db_from_profiles(profiles, budget=budget, allocation=allocation)
        else:
            schema = build_schema(table.df, max_examples=max_examples, max_value_chars=50)
            cells = build_cell_db(
                table.df,
                budget=budget,
                allocation=allocation,
                max_value_chars=max_value_chars,
                categorical_limit=categorical_limit,
                include_numeric=include_numeric,
            )
        stats.extract_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        schema_retriever = factory()
        schema_retriever.add([Doc(_schema_id(i), e.to_text()) for i, e in enumerate(schema)])
        stats.schema_index_s = time.perf_counter() - t1
        t2 = time.perf_counter()
        cell_retriever = factory()
        cell_retriever.add([Doc(_cell_id(i), e.to_text()) for i, e in enumerate(cells.entries)])
        stats.cell_index_s = time.perf_counter() - t2
        stats.n_schema, stats.n_cells = len(schema), len(cells.entries)
        stats.n_distinct, stats.skipped_columns = cells.n_distinct, dict(cells.skipped)
        logger.info(
            "indexed table %s: %d columns, %d of %d cells in %.2fs",
            table.id,
            stats.n_schema,
            stats.n_cells,
            stats.n_distinct,
            stats.total_s,
        )
        return cls(table, schema, cells, schema_retriever, cell_retriever, stats)

    def search_schema(
        self, queries: Sequence[str], k: int = 5, *, limit: int | None = None
    ) -> list[SchemaEntry]:
        """Top ``k`` columns per query, merged (best score per column), best first.

        Args:
            queries: The question and/or its expansions (empty strings ignored).
            k: Hits per query.
            limit: Cap on the merged list (default: no cap, at most ``k * len(queries)``).
        """
        hits = _search(self.schema_retriever, queries, k)
        return _merge(hits, self._schema_by_id, limit)

    def search_cells(
        self,
        queries: Sequence[str],
        k: int = 5,
        *,
        columns: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[CellEntry]:
        """Top ``k`` cell values per query, merged, best first.

        Args:
            queries: Cell-oriented queries (keywords, entity names...).
            k: Hits per query.
            columns: Keep only cells of these columns (e.g. the retrieved
                schema); the retriever is asked for proportionally more hits.
            limit: Cap on the merged list.
        """
        if columns is None:
            return _merge(_search(self.cell_retriever, queries, k), self._cell_by_id, limit)
        wanted = set(columns)
        n_cols = max(1, len(self.cells.allocation))
        depth = k * max(1, math.ceil(n_cols / max(1, len(wanted))))
        per_query = []
        for hits in _search(self.cell_retriever, queries, depth):
            kept = [h for h in hits if self._cell_by_id[h.id].column in wanted]
            per_query.append(kept[:k])
        return _merge(per_query, self._cell_by_id, limit)


def _schema_id(i: int) -> str:
    return f"s{i}"


def _cell_id(i: int) -> str:
    return f"c{i}"


def _search(retriever: Retriever, queries: Sequence[str], k: int) -> list[list[Hit]]:
    clean = [q for q in dict.fromkeys(q.strip() for q in queries) if q]
    if not clean or k <= 0 or len(retriever) == 0:
        return []
    return retriever.search_many(clean, min(k, len(retriever)))


def _merge(per_query: list[list[Hit]], by_id: dict[str, E], limit: int | None) -> list[E]:
    """Union of hits keeping each id's best score; ties keep first-seen order."""
    best: dict[str, float] = {}
    for hits in per_query:
        for hit in hits:
            if hit.id not in best or hit.score > best[hit.id]:
                best[hit.id] = hit.score
    ranked = sorted(best, key=lambda i: -best[i])
    if limit is not None:
        ranked = ranked[:limit]
    return [by_id[i] for i in ranked]
