"""Retrieval over a corpus of thousands of tables (de Souza et al., TableRAG), without pickle.

Each table is indexed through several *channels* over the same table ids: BM25
per text field (``meta`` = title + section + column names, ``cells``,
``intro``, linked ``passages``), a dense index of ``meta``, optionally dense
row documents and a MaxSim token index. ``search(method="hybrid")`` fuses the
channels' max-normalised scores with :class:`HybridWeights`.

The dense vectors live on a vector engine (:class:`~.engines.EngineConfig`):
FAISS files in the index folder by default, or a Qdrant or Milvus collection;
the BM25 and MaxSim channels stay in the folder. Tables are added and removed
one by one (:meth:`CorpusIndex.add_tables`, :meth:`CorpusIndex.remove_tables`):
only new tables are embedded.
"""

from __future__ import annotations

import json
import logging
from collections import deque
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from tqdm.auto import tqdm

from tablerag_agents.errors import (
    ConfigError,
    IndexNotFoundError,
    StaleIndexError,
    UntrustedEngineError,
)
from tablerag_agents.models.embeddings import embeddings_name
from tablerag_agents.retrieval import corpus_build
from tablerag_agents.retrieval.base import Hit, Retriever
from tablerag_agents.retrieval.colbert import SharedQueryEncoder, TokenEncoder
from tablerag_agents.retrieval.corpus_config import (
    FORMAT_VERSION,
    SEARCH_METHODS,
    CorpusConfig,
    HybridWeights,
    SearchMethod,
    TableHit,
)
from tablerag_agents.retrieval.corpus_fields import PassageLookup
from tablerag_agents.retrieval.corpus_prep import (
    PreparedTable,
    PrepContext,
    PrepPool,
    resolve_workers,
)
from tablerag_agents.retrieval.engines import EngineConfig, VectorEngine
from tablerag_agents.retrieval.hybrid import HybridRetriever
from tablerag_agents.retrieval.rerank_llm import DEFAULT_RERANK_WEIGHT, rerank_with_llm
from tablerag_agents.retrieval.table_store import StagedTable, TableStore, read_staged
from tablerag_agents.tables.model import Table

logger = logging.getLogger(__name__)

MANIFEST = "manifest.json"
_BM25_METHOD_FIELDS = ("meta", "cells", "intro", "passages")
#: Channels that only re-score the others' candidates in fused search (MaxSim over
#: every table is the costly part; over ~100 candidates it is cheap).
_SCORE_ONLY = frozenset({"colbert"})
_CHUNK = 1024
"""Tables prepared, embedded and added at a time by ``add_tables`` (a multiple of the
embedding batch): bounds the memory of one call, whatever its size."""


class CorpusIndex:
    """Find the tables of a corpus that answer a question.

    Create with :meth:`build` or :meth:`load`; add more with :meth:`add_tables`.
    """

    channels: dict[str, Retriever]
    """Search channels by name: BM25 fields, ``dense``, ``rows``, ``colbert``."""

    def __init__(
        self,
        embeddings: Embeddings,
        *,
        config: CorpusConfig | None = None,
        token_encoder: TokenEncoder | None = None,
        weights: HybridWeights | None = None,
        store_tables: bool = True,
        engine: EngineConfig | None = None,
    ) -> None:
        """Create an empty index (prefer :meth:`build`).

        ``engine`` says where the dense vectors go (default: FAISS in the folder);
        an engine collection must not hold vectors yet.
        """
        self._setup(embeddings, config, token_encoder, weights, store_tables, engine)
        try:
            self.channels = corpus_build.make_channels(
                self.config, self._query_embeddings, self._token_encoder, self._engine
            )
        except BaseException:
            self._engine.close()
            raise

    def _setup(
        self,
        embeddings: Embeddings,
        config: CorpusConfig | None,
        token_encoder: TokenEncoder | None,
        weights: HybridWeights | None,
        store_tables: bool,
        engine: EngineConfig | None,
    ) -> None:
        self.embeddings = embeddings
        self.config = config or CorpusConfig()
        self.weights = weights or HybridWeights()
        self.store_tables = store_tables
        self._query_embeddings, self._token_encoder, self.colbert = corpus_build.channel_encoders(
            self.config, embeddings, token_encoder
        )
        self.engine = (engine or EngineConfig()).with_collection()
        self._engine = VectorEngine(self.engine)
        self.channels = {}
        self.path: Path | None = None
        self._info: dict[str, tuple[str, str, str]] = {}  # id -> (caption, section, meta text)
        self._pending: dict[str, Table] = {}
        self._staged: dict[str, StagedTable] = {}  # tables written to files before save
        self._store: TableStore | None = None

    # ----------------------------------------------------------------- building
    @classmethod
    def build(
        cls,
        tables: Iterable[Table],
        embeddings: Embeddings,
        *,
        path: str | Path | None = None,
        config: CorpusConfig | None = None,
        passages: PassageLookup | None = None,
        token_encoder: TokenEncoder | None = None,
        weights: HybridWeights | None = None,
        store_tables: bool = True,
        progress: bool = True,
        engine: EngineConfig | None = None,
    ) -> CorpusIndex:
        """Index ``tables``; save to ``path`` when given.

        Args:
            tables: The corpus.
            embeddings: Embeddings for the dense channels (their name keys the index).
            path: Folder to save the index into.
            config: Index-time settings.
            passages: Lookup of linked-page texts for the ``passages`` field.
            token_encoder: Token-vector encoder for the MaxSim channel (default:
                the token outputs of ``embeddings.model`` when available).
            weights: Default weights of the hybrid search.
            store_tables: Keep the tables so :meth:`get_table` can return them.
            progress: Show tqdm progress bars.
            engine: Where the dense vectors go (default: FAISS files in ``path``).
        """
        index = cls(
            embeddings,
            config=config,
            token_encoder=token_encoder,
            weights=weights,
            store_tables=store_tables,
            engine=engine,
        )
        index.add_tables(tables, passages=passages, progress=progress)
        if path is not None:
            index.save(path)
        return index

    def add_tables(
        self,
        tables: Iterable[Table],
        *,
        passages: PassageLookup | None = None,
        progress: bool = True,
        workers: int = 1,
    ) -> int:
        """Index more tables (new ids only); returns how many were added.

        ``workers`` processes (0: one per core) build the tables' texts and
        BM25 tokens while this process embeds; the index does not depend on it
        (a lookup given as ``passages`` must then be picklable, as
        :class:`~.corpus_fields.LinkedPassages` is). Call :meth:`save`
        afterwards to persist them.
        """
        tables = list(tables)
        seen: set[str] = set()
        for table in tables:
            if table.id in self._info or table.id in seen:
                raise ValueError(f"duplicate table id {table.id!r}")
            seen.add(table.id)
        if not tables:
            return 0
        if "passages" in self.config.fields and passages is None:
            logger.warning("no passage lookup given: the 'passages' field of new tables is empty")
        self._add_in_chunks(tables, passages, workers, progress)
        if self.store_tables:
            self._pending.update((t.id, t) for t in tables)
        logger.info("indexed %d tables (%d in total)", len(tables), len(self._info))
        return len(tables)

    def _add_in_chunks(
        self, tables: list[Table], passages: PassageLookup | None, workers: int, progress: bool
    ) -> None:
        """Prepare, embed and add :data:`_CHUNK` tables at a time.

        With ``workers`` other than 1 the next chunk is prepared on the pool's
        processes while one is embedded; at most two chunks' texts, tokens and
        vectors are held at once, however many tables are added.
        """
        size = _CHUNK
        lag = 0 if resolve_workers(workers) == 1 else 1
        with (
            PrepPool(PrepContext(self.config, passages), workers) as pool,
            tqdm(total=len(tables), disable=not progress, unit=" tables") as bar,
        ):
            ahead: deque[list[Future[list[Any]]]] = deque()
            for start in range(0, len(tables), size):
                chunk = tables[start : start + size]
                ahead.append(pool.submit(chunk, [None] * len(chunk)))
                if len(ahead) > lag:
                    bar.update(self._add_collected(pool, ahead.popleft()))
            while ahead:
                bar.update(self._add_collected(pool, ahead.popleft()))

    def _add_collected(self, pool: PrepPool, futures: list[Future[list[Any]]]) -> int:
        prepared, _ = pool.collect(futures)
        return self.add_prepared(prepared, self.encode(prepared))

    def encode(self, prepared: Sequence[PreparedTable]) -> corpus_build.EncodedBatch:
        """Embed prepared tables for this index's dense and MaxSim channels."""
        return corpus_build.encode_batch(self.channels, prepared, progress=False)

    def add_prepared(
        self, prepared: Sequence[PreparedTable], encoded: corpus_build.EncodedBatch
    ) -> int:
        """Add tables prepared and embedded elsewhere (new ids only); returns how many.

        A table whose cells were written to a file (``PreparedTable.stored``) is
        stored from that file at :meth:`save`; the file must stay until then.
        """
        seen: set[str] = set()
        for item in prepared:
            if item.table_id in self._info or item.table_id in seen:
                raise ValueError(f"duplicate table id {item.table_id!r}")
            seen.add(item.table_id)
        self._info.update(corpus_build.add_batch(self.channels, self.config, prepared, encoded))
        if self.store_tables:
            self._staged.update((p.table_id, p.stored) for p in prepared if p.stored is not None)
        return len(prepared)

    def remove_tables(self, table_ids: Iterable[str]) -> int:
        """Remove tables from every channel (unknown ids are ignored); returns how many.

        Nothing is embedded again. Engine stores change at once; call
        :meth:`save` to update the folder.
        """
        ids = [t for t in dict.fromkeys(table_ids) if t in self._info]
        if not ids:
            return 0
        for channel in self.channels.values():
            channel.delete(ids)
        for table_id in ids:
            del self._info[table_id]
            self._pending.pop(table_id, None)
            self._staged.pop(table_id, None)
        logger.info("removed %d tables (%d left)", len(ids), len(self._info))
        return len(ids)

    def subset(self, table_ids: Iterable[str]) -> CorpusIndex:
        """Return an in-memory FAISS index over some of the tables, without re-embedding.

        The channels copy the stored vectors, token matrices and texts.

        Raises:
            KeyError: An id is not indexed.
        """
        ids = list(dict.fromkeys(table_ids))
        missing = [t for t in ids if t not in self._info]
        if missing:
            raise KeyError(missing[0])
        out = CorpusIndex.__new__(CorpusIndex)
        out._setup(self.embeddings, self.config, None, self.weights, self.store_tables, None)
        out._query_embeddings, out._token_encoder = self._query_embeddings, self._token_encoder
        out.colbert = self.colbert
        out.channels = {name: channel.subset(ids) for name, channel in self.channels.items()}
        out._info = {t: self._info[t] for t in ids}
        if self.store_tables:
            out._pending = {t: self.get_table(t) for t in ids}
        return out

    # -------------------------------------------------------------- persistence
    def manifest(self) -> dict[str, Any]:
        """Return what keys this index: format, embeddings name and index parameters."""
        params = self.config.params()
        params["colbert"] = self.colbert
        return {
            "format_version": FORMAT_VERSION,
            "embeddings": embeddings_name(self.embeddings),
            "params": params,
        }

    def save(self, path: str | Path | None = None) -> Path:
        """Write the index (FAISS, bm25s arrays, Parquet, JSON; no pickle); return its path."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise ValueError("save() needs a path for an index that was never saved")
        target.mkdir(parents=True, exist_ok=True)
        (target / MANIFEST).unlink(missing_ok=True)  # an interrupted save leaves no valid index
        for name, channel in self.channels.items():
            channel.save(target / name)  # type: ignore[attr-defined]
        corpus_build.save_info(target, self._info)
        if self.store_tables:
            self._save_tables(target)
        data = {**self.manifest(), "n_tables": len(self._info)}
        if self.engine.backend != "faiss":
            data["engine"] = self.engine.to_manifest(target)
            data["engine_counts"] = corpus_build.engine_counts(self.channels)
        (target / MANIFEST).write_text(json.dumps(data, indent=2), encoding="utf-8")
        self.path = target
        return target

    def _save_tables(self, target: Path) -> None:
        store = TableStore(target / "tables")
        if self._store is not None and self._store.folder != store.folder:
            missing = [t for t in self._store.ids() if t not in store and t in self._info]
            store.add(self._store.get_many(missing))
        store.remove([t for t in store.ids() if t not in self._info])  # removed tables
        store.add(t for tid, t in self._pending.items() if tid not in store)
        store.adopt([s for tid, s in self._staged.items() if tid not in store])
        self._pending.clear()
        self._staged.clear()
        self._store = store

    @classmethod
    def load(
        cls,
        path: str | Path,
        embeddings: Embeddings,
        *,
        config: CorpusConfig | None = None,
        token_encoder: TokenEncoder | None = None,
        weights: HybridWeights | None = None,
        engine_url: str | None = None,
        trust_engine: bool = False,
    ) -> CorpusIndex:
        """Open an index saved by :meth:`save`.

        An index on Qdrant or Milvus opens the engine its manifest names only
        with ``trust_engine=True``; ``engine_url`` names the engine instead
        (the caller's own choice, so no trust is needed). FAISS indexes need neither.

        Raises:
            IndexNotFoundError: If ``path`` holds no index.
            StaleIndexError: If it was built with other embeddings, other
                parameters than ``config`` (when given) or another format, or
                its engine holds fewer vectors than it saved.
            UntrustedEngineError: The manifest names an engine and neither
                ``engine_url`` nor ``trust_engine`` is given.
        """
        folder = Path(path)
        found = cls.read_manifest(folder)
        early = {"format_version": FORMAT_VERSION, "embeddings": embeddings_name(embeddings)}
        if any(found.get(k) != v for k, v in early.items()):
            raise StaleIndexError(folder, early, {k: found.get(k) for k in early})
        engine = EngineConfig.from_manifest(found.get("engine"), folder)
        if engine.backend != "faiss":
            if engine_url is not None:
                engine = replace(engine, url=engine_url)
            elif not trust_engine:
                raise UntrustedEngineError(folder, engine.describe())
        stored = CorpusConfig(**{**found["params"], "fields": tuple(found["params"]["fields"])})
        index = cls.__new__(cls)
        index._setup(
            embeddings,
            config or stored,
            token_encoder,
            weights,
            (folder / "tables").is_dir(),
            engine,
        )
        expected = index.manifest()
        found_key = {k: found.get(k) for k in expected}
        if found_key != expected:
            raise StaleIndexError(folder, expected, found_key)
        index._info = corpus_build.load_info(folder)
        index.channels = corpus_build.load_channels(
            folder,
            index.config,
            index._engine,
            index.colbert,
            index._query_embeddings,
            index._token_encoder,
        )
        if engine.backend != "faiss":
            corpus_build.reconcile_engine(
                index.channels, found.get("engine_counts"), set(index._info), folder
            )
        if index.store_tables:
            index._store = TableStore(folder / "tables")
        index.path = folder
        return index

    @staticmethod
    def read_manifest(path: str | Path) -> dict[str, Any]:
        """Return the saved index's manifest (IndexNotFoundError if there is none)."""
        folder = Path(path)
        if not (folder / MANIFEST).is_file():
            raise IndexNotFoundError(folder)
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise StaleIndexError(folder, {"manifest": "a JSON object"}, {"manifest": data})
        return data

    @classmethod
    def engine_of(cls, path: str | Path) -> EngineConfig:
        """Where the saved index at ``path`` keeps its dense vectors (read from its manifest)."""
        folder = Path(path)
        return EngineConfig.from_manifest(cls.read_manifest(folder).get("engine"), folder)

    def close(self) -> None:
        """Close the vector engine's connection (an index on FAISS holds none)."""
        self._engine.close()

    def __enter__(self) -> CorpusIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------- search
    def __len__(self) -> int:
        """Number of indexed tables."""
        return len(self._info)

    def __contains__(self, table_id: object) -> bool:
        """Whether a table id is indexed."""
        return table_id in self._info

    def table_ids(self) -> list[str]:
        """Indexed table ids, in insertion order."""
        return list(self._info)

    def retriever(
        self, method: SearchMethod = "hybrid", *, weights: HybridWeights | None = None
    ) -> Retriever:
        """Return the table-level retriever behind ``method`` (hits' ids are table ids)."""
        if method not in SEARCH_METHODS:
            raise ConfigError(f"unknown search method {method!r}; use one of {SEARCH_METHODS}")
        if method in ("bm25", "dense", "rows", "colbert"):
            return self._channel("meta" if method == "bm25" else method, method)
        if method == "rrf":
            return HybridRetriever(
                [self._channel("meta", method), self._channel("dense", method)], fusion="rrf"
            )
        w = weights or self.weights
        table = w.channel_weights()
        names = [
            n
            for n in self.channels
            if table.get(n, 0.0) != 0.0 and (method == "hybrid" or n in _BM25_METHOD_FIELDS)
        ]
        if not names:
            raise ConfigError(f"no indexed channel has a non-zero weight for {method!r}")
        generate = [n not in _SCORE_ONLY for n in names]
        if not any(generate):
            raise ConfigError(f"{method!r} needs a non-zero weight on a channel besides {names}")
        return HybridRetriever(
            [self.channels[n] for n in names],
            weights=[table[n] for n in names],
            fusion="score",
            candidates=w.candidates,
            generate=generate,
        )

    def _channel(self, name: str, method: str) -> Retriever:
        if name not in self.channels:
            raise ConfigError(f"search method {method!r} needs the {name!r} channel, not indexed")
        return self.channels[name]

    def search(
        self,
        question: str,
        k: int = 10,
        method: SearchMethod = "hybrid",
        *,
        weights: HybridWeights | None = None,
        rerank_model: BaseChatModel | None = None,
        rerank_top: int = 10,
        rerank_weight: float | None = DEFAULT_RERANK_WEIGHT,
    ) -> list[TableHit]:
        """Return the ``k`` best tables for ``question``.

        Args:
            question: The user question.
            k: Number of tables.
            method: ``hybrid`` (default, fused channels), ``bm25`` (title,
                section and columns only), ``bm25_fields`` (all BM25 fields
                fused), ``dense``, ``rows``, ``colbert`` or ``rrf`` (RRF of
                ``bm25`` and ``dense``).
            weights: Override the hybrid weights for this search.
            rerank_model: If given, re-rank the best ``rerank_top`` with this LLM.
            rerank_top: How many candidates the LLM sees.
            rerank_weight: How much the LLM's pick counts against the
                first-stage scores (``None``: the LLM's order wins outright).
        """
        hits = self.retriever(method, weights=weights).search(question, max(k, rerank_top))
        table_hits = [self._table_hit(h) for h in hits]
        if rerank_model is not None:
            table_hits = rerank_with_llm(
                rerank_model, question, table_hits, top_n=rerank_top, weight=rerank_weight
            )
        return table_hits[:k]

    def search_many(
        self,
        questions: Sequence[str],
        k: int = 10,
        method: SearchMethod = "hybrid",
        *,
        weights: HybridWeights | None = None,
    ) -> list[list[TableHit]]:
        """Search several questions (no LLM re-rank); query encoding is batched."""
        retriever = self.retriever(method, weights=weights)
        self.prime_queries(questions)
        return [[self._table_hit(h) for h in retriever.search(q, k)] for q in questions]

    def prime_queries(self, questions: Sequence[str]) -> None:
        """Batch-encode questions ahead of searching them (a no-op for other embeddings)."""
        dense = self.channels.get("dense")
        encoder = getattr(dense, "embeddings", None)
        if isinstance(encoder, SharedQueryEncoder):
            encoder.prime(questions)

    def _table_hit(self, hit: Hit) -> TableHit:
        caption, section, meta = self._info.get(hit.id, ("", "", hit.text))
        return TableHit(hit.id, hit.score, caption, meta, {"section_title": section})

    def get_table(self, table_id: str) -> Table:
        """Return a stored table (KeyError if unknown or the index stores no tables)."""
        if table_id not in self._info:
            raise KeyError(table_id)
        if table_id in self._pending:
            return self._pending[table_id]
        if table_id in self._staged:
            return read_staged(self._staged[table_id])
        if self._store is not None and table_id in self._store:
            return self._store.get(table_id)
        raise KeyError(table_id)
