"""A batched, parallel, resumable indexing run: input files to a :class:`CorpusIndex`.

The inputs are cut into *units* (one parsed table file, or one OTT-QA table
dict) in a fixed order; every ``batch_size`` units form a batch. A batch is
prepared on a :class:`~.corpus_prep.PrepPool` (parsing, texts, BM25 tokens,
cells written to a file) while the previous batch is embedded here, then
written to the run's :class:`~.corpus_resume.ResumeLog` and added to the index.
A rerun replays the committed batches from the log (nothing is parsed or
embedded again for them) and continues with the next batch; batches are the
same units whatever ``workers`` is, so the index is the same as an
uninterrupted run's.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from tablerag_agents.errors import MalformedIndexError, TableLoadError
from tablerag_agents.retrieval.corpus import CorpusIndex
from tablerag_agents.retrieval.corpus_prep import PrepContext, PrepPool, Unit
from tablerag_agents.retrieval.corpus_resume import ResumeLog
from tablerag_agents.tables import load_tables
from tablerag_agents.tables.cleaning import warn
from tablerag_agents.tables.ottqa import read_ottqa_items

logger = logging.getLogger(__name__)

DEFAULT_BATCH_SIZE = 1024
"""Tables per committed batch (a multiple of the embedding batch of 256)."""
_AHEAD = 2
"""Batches prepared ahead of the one being embedded."""


@dataclass
class RunStats:
    """What a run did.

    Attributes:
        added: Tables added to the index by this run (replayed ones included).
        skipped: Tables already in the index, or repeated in the inputs.
        replayed: Batches read back from an interrupted run's log.
        unreadable: Units that could not be parsed (with their reasons).
    """

    added: int = 0
    skipped: int = 0
    replayed: int = 0
    unreadable: list[str] = field(default_factory=list)


def input_units(paths: Sequence[Path], *, ottqa: bool) -> Iterator[tuple[str, Unit]]:
    """Yield ``(table id, unit)`` for every input, in order.

    Table files are parsed here (each in a bounded worker, see
    :func:`~tablerag_agents.tables.load_tables`; unreadable files are skipped
    with a warning); an OTT-QA JSON is read whole and its table dicts are
    parsed later, in the pool.
    """
    for path in paths:
        if not path.exists():
            raise TableLoadError(path, "no such file or directory")
        if ottqa:
            yield from _ottqa_units(path)
        else:
            for table in load_tables(path, on_error="warn"):
                yield table.id, table


def _ottqa_units(path: Path) -> Iterator[tuple[str, Unit]]:
    """The table dicts of an OTT-QA ``tables.json`` (``{id: table}`` or a list of tables)."""
    bad = 0
    for key, value in read_ottqa_items(path):
        if not isinstance(value, dict):
            bad += 1
            continue
        table_id = str(value.get("uid") or key or "")  # the id ottqa_table gives it
        yield table_id, (table_id, value, str(path))
    if bad:
        warn(f"{path}: skipped {bad} entries that are not table objects")


def _prefetch(items: Iterable[Any], size: int) -> Iterator[Any]:
    """Iterate ``items`` in a background thread (file parsing overlaps the embedding)."""
    buffer: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=size)
    stop = threading.Event()

    def fill() -> None:
        try:
            for item in items:
                if stop.is_set():
                    return
                buffer.put(("item", item))
            buffer.put(("end", None))
        except BaseException as exc:  # handed to the consumer, raised there
            buffer.put(("error", exc))

    thread = threading.Thread(target=fill, name="index-reader", daemon=True)
    thread.start()
    try:
        while True:
            kind, value = buffer.get()
            if kind == "end":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()
        while thread.is_alive():  # unblock a reader waiting on a full buffer
            try:
                buffer.get_nowait()
            except queue.Empty:
                thread.join(0.05)


def _batches(
    units: Iterator[tuple[str, Unit]], base: set[str], size: int, stats: RunStats
) -> Iterator[list[tuple[str, Unit]]]:
    """New units (not in ``base``, not repeated) in batches of ``size``."""
    seen: set[str] = set()
    batch: list[tuple[str, Unit]] = []
    for table_id, unit in units:
        if table_id in base or table_id in seen:
            stats.skipped += 1
            continue
        seen.add(table_id)
        batch.append((table_id, unit))
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def run_indexing(
    index: CorpusIndex,
    units: Iterable[tuple[str, Unit]],
    log: ResumeLog,
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    workers: int = 1,
    passages_file: Path | None = None,
    progress: bool = True,
) -> RunStats:
    """Add the new units to ``index`` batch by batch, committing each to ``log``.

    Batches the log already holds are replayed first; their units must be the
    first units of ``units`` (the inputs did not change), else the run stops.

    Raises:
        MalformedIndexError: The log does not match the inputs or is malformed.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    stats = RunStats()
    base = set(index.table_ids())
    logged: list[list[str]] = []
    for number in range(log.committed):
        batch_units, prepared, encoded = log.read(
            number, index.config.fields, set(index.channels), max_units=batch_size
        )
        index.add_prepared(prepared, encoded)
        logged.append(batch_units)
        stats.added += len(prepared)
        stats.replayed += 1
    if stats.replayed:
        logger.info("resumed: %d batches (%d tables) read back", stats.replayed, stats.added)
    if "passages" in index.config.fields and passages_file is None:
        logger.warning("no passages file given: the 'passages' field of new tables is empty")
    batches = _batches(_prefetch(units, 2 * batch_size), base, batch_size, stats)
    for number, batch_units in enumerate(logged):
        found = next(batches, [])
        if [u for u, _ in found] != batch_units:
            raise MalformedIndexError(
                log.folder,
                f"batch-{number:06d}",
                "holds other tables than the inputs give now (did the inputs change?)",
            )
    ctx = PrepContext(index.config)
    bar = tqdm(
        desc="index", initial=stats.added, disable=not progress, unit=" tables", smoothing=0.1
    )
    with bar, PrepPool(ctx, workers, passages_file=passages_file) as pool:
        pending: deque[tuple[int, list[str], list[Future[list[Any]]]]] = deque()
        number = log.committed
        for batch in batches:
            pending.append((number, *_submit(pool, log, number, batch, index.store_tables)))
            number += 1
            if len(pending) > _AHEAD:
                _finish(index, log, pool, pending.popleft(), stats, bar)
        while pending:
            _finish(index, log, pool, pending.popleft(), stats, bar)
    if stats.unreadable:
        warn(f"skipped {len(stats.unreadable)} unreadable table(s), e.g. {stats.unreadable[:3]}")
    return stats


def _submit(
    pool: PrepPool, log: ResumeLog, number: int, batch: list[tuple[str, Unit]], store: bool
) -> tuple[list[str], list[Future[list[Any]]]]:
    cells = log.cells_dir(number) if store else None
    files = [cells / f"{n:06d}.parquet" if cells else None for n in range(len(batch))]
    return [u for u, _ in batch], pool.submit([unit for _, unit in batch], files)


def _finish(
    index: CorpusIndex,
    log: ResumeLog,
    pool: PrepPool,
    item: tuple[int, list[str], list[Future[list[Any]]]],
    stats: RunStats,
    bar: tqdm[Any],
) -> None:
    """Embed a prepared batch, commit it to the log, then add it to the index."""
    number, units, futures = item
    prepared, unreadable = pool.collect(futures)
    stats.unreadable.extend(unreadable)
    encoded = index.encode(prepared)
    log.commit(number, units, prepared, encoded)
    index.add_prepared(prepared, encoded)
    stats.added += len(prepared)
    bar.update(len(prepared))
