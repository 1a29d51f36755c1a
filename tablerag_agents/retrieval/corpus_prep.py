"""Table parsing and BM25 field preparation for corpus indexing, in a process pool.

The CPU work of indexing besides the embeddings is per table and independent:
turning an OTT-QA table dict into a :class:`Table`, building its text fields,
tokenizing them for BM25, cutting its row documents and writing its cells to a
Parquet file. :class:`PrepPool` runs that on ``workers`` processes (in this
process when ``workers == 1``) while the caller embeds the previous batch; the
results come back in input order, so the index does not depend on ``workers``.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
from collections.abc import Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tablerag_agents.errors import TableLoadError
from tablerag_agents.retrieval.corpus_config import CorpusConfig
from tablerag_agents.retrieval.corpus_fields import (
    LinkedPassages,
    PassageLookup,
    row_texts,
    table_fields,
    table_links,
)
from tablerag_agents.retrieval.table_store import StagedTable, write_table_file
from tablerag_agents.retrieval.tokenize import Tokenizer
from tablerag_agents.tables.model import Table
from tablerag_agents.tables.ottqa import ottqa_table

logger = logging.getLogger(__name__)

MAX_MEMO_PAGES = 50_000
"""Linked pages whose BM25 tokens a process remembers (then the memo starts over)."""

Unit = Table | tuple[str, dict[str, Any], str]
"""One input of the pool: a parsed table, or ``(key, OTT-QA dict, source file)``."""


@dataclass
class PreparedTable:
    """A table's texts and BM25 tokens, ready to be embedded and added to the channels.

    Attributes:
        table_id: The table id.
        caption: The caption (page title).
        section: The section title.
        fields: Text of ``meta`` and of every BM25 field of the index.
        tokens: BM25 tokens of every BM25 field of the index.
        rows: Row documents (empty unless the index has a ``rows`` channel).
        stored: The table's cells written to a file (when the caller asked for one).
    """

    table_id: str
    caption: str
    section: str
    fields: dict[str, str]
    tokens: dict[str, list[str]]
    rows: list[str] = field(default_factory=list)
    stored: StagedTable | None = None


@dataclass
class PrepContext:
    """What every worker needs: the index settings and the passage lookup."""

    config: CorpusConfig
    passages: PassageLookup | None = None

    def __post_init__(self) -> None:
        """Build the tokenizer once per process."""
        self.tokenizer = Tokenizer(stopwords=self.config.stopwords, stem=self.config.stem)
        self._page_tokens: dict[str, list[str]] = {}

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without the tokenizer (its stemmer is rebuilt in the worker) or the memo."""
        return {k: v for k, v in self.__dict__.items() if k not in ("tokenizer", "_page_tokens")}

    def passage_tokens(self, table: Table) -> list[str]:
        """BM25 tokens of the pages ``table`` links to, each page tokenized once per process.

        Tables share linked pages (a country, a club); tokenizing the joined text
        of every table's pages was most of the tokenizing time. The tokens are
        those of the ``passages`` field's text: its pages are joined by newlines,
        which no token crosses.
        """
        if self.passages is None:
            return []
        if len(self._page_tokens) > MAX_MEMO_PAGES:
            self._page_tokens = {}
        memo, out = self._page_tokens, []
        for link in table_links(table):
            text = self.passages(link)
            if text:
                tokens = memo.get(text)
                if tokens is None:
                    tokens = memo[text] = self.tokenizer(text)
                out.extend(tokens)
        return out

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore and rebuild the tokenizer."""
        self.__dict__.update(state)
        self.__post_init__()


def prepare_table(table: Table, ctx: PrepContext, table_file: Path | None) -> PreparedTable:
    """Build one table's fields and tokens; write its cells to ``table_file`` when given."""
    texts = table_fields(table, ctx.passages)
    fields = {name: texts[name] for name in ("meta", *ctx.config.fields)}
    tokens = {
        name: ctx.passage_tokens(table) if name == "passages" else ctx.tokenizer(texts[name])
        for name in ctx.config.fields
    }
    rows = row_texts(table, max_chars=ctx.config.max_row_chars) if ctx.config.rows else []
    stored = None
    if table_file is not None:
        meta = write_table_file(table, table_file)
        stored = StagedTable(table.id, table.caption, meta, table_file)
    return PreparedTable(
        table.id,
        table.caption,
        str(table.metadata.get("section_title", "") or ""),
        fields,
        tokens,
        rows,
        stored,
    )


def _parse(unit: Unit) -> Table:
    """The table of one unit (an OTT-QA dict is converted here, in the worker)."""
    if isinstance(unit, Table):
        return unit
    key, raw, source = unit
    table = ottqa_table(raw, table_id=key)
    table.metadata["source"] = source
    return table


def prepare_units(
    units: Sequence[Unit], files: Sequence[Path | None], ctx: PrepContext
) -> list[PreparedTable | str]:
    """Prepare a chunk of units; a unit that cannot be parsed gives its reason instead."""
    out: list[PreparedTable | str] = []
    for unit, file in zip(units, files, strict=True):
        try:
            table = _parse(unit)
        except TableLoadError as exc:
            out.append(f"{unit[0] if isinstance(unit, tuple) else unit.id}: {exc.reason}")
            continue
        out.append(prepare_table(table, ctx, file))
    return out


_WORKER_CTX: PrepContext | None = None  # set once in each pool process by _init_worker


def _init_worker(ctx: PrepContext, passages_file: Path | None) -> None:
    global _WORKER_CTX
    if passages_file is not None:
        ctx.passages = LinkedPassages.from_jsonl(passages_file)
    _WORKER_CTX = ctx


def _prepare_in_worker(units: Sequence[Unit], files: Sequence[Path | None]) -> list[Any]:
    assert _WORKER_CTX is not None, "the worker was not initialised"
    return prepare_units(units, files, _WORKER_CTX)


MIN_POOL_BATCH = 32
"""Smallest batch that starts the worker processes (see :class:`PrepPool`)."""


def resolve_workers(workers: int) -> int:
    """``workers``, or every core the process may use when it is 0."""
    if workers < 0:
        raise ValueError(f"workers must be >= 0 (0: all cores), got {workers}")
    if workers:
        return workers
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class PrepPool:
    """Prepares batches of units on ``workers`` processes (in this process for one worker).

    The processes start with the first batch of at least :data:`MIN_POOL_BATCH`
    units; smaller batches (a few tables) are prepared here, which is faster
    than starting processes.

    Args:
        ctx: Settings and passage lookup (a lookup is pickled to each worker once).
        workers: Processes; 0 means one per core.
        passages_file: A JSONL(.gz) of linked-page texts, read by each process
            that needs it (instead of ``ctx.passages``).
    """

    def __init__(
        self, ctx: PrepContext, workers: int = 1, *, passages_file: Path | None = None
    ) -> None:
        """Prepare the pool; no process starts yet."""
        self.workers = resolve_workers(workers)
        self._ctx = ctx
        self._passages_file = passages_file
        self._executor: Executor | None = None

    def _local(self) -> PrepContext:
        """The context for work done in this process (its passages read on first use)."""
        if self._passages_file is not None and self._ctx.passages is None:
            self._ctx.passages = LinkedPassages.from_jsonl(self._passages_file)
        return self._ctx

    def _start(self) -> Executor:
        if self._executor is None:
            ctx = self._ctx
            if self._passages_file is not None:  # each worker reads the file itself
                ctx = replace(ctx, passages=None)
            self._executor = ProcessPoolExecutor(
                self.workers,
                mp_context=mp.get_context("spawn"),  # safe next to torch's threads
                initializer=_init_worker,
                initargs=(ctx, self._passages_file),
            )
        return self._executor

    def submit(
        self, units: Sequence[Unit], files: Sequence[Path | None]
    ) -> list[Future[list[Any]]]:
        """Start preparing one batch; :meth:`collect` the futures in order."""
        if self.workers == 1 or (self._executor is None and len(units) < MIN_POOL_BATCH):
            done: Future[list[Any]] = Future()
            done.set_result(prepare_units(units, files, self._local()))
            return [done]
        executor = self._start()
        size = max(1, -(-len(units) // (self.workers * 4)))  # a few chunks per worker
        return [
            executor.submit(
                _prepare_in_worker, list(units[i : i + size]), list(files[i : i + size])
            )
            for i in range(0, len(units), size)
        ]

    @staticmethod
    def collect(futures: Sequence[Future[list[Any]]]) -> tuple[list[PreparedTable], list[str]]:
        """Wait for a batch: its prepared tables in input order, and the skip reasons."""
        prepared: list[PreparedTable] = []
        skipped: list[str] = []
        for future in futures:
            for item in future.result():
                if isinstance(item, str):
                    skipped.append(item)
                else:
                    prepared.append(item)
        return prepared, skipped

    def close(self) -> None:
        """Stop the worker processes (pending work is cancelled)."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

    def __enter__(self) -> PrepPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
