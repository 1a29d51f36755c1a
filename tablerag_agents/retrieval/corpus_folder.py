"""Build, extend and search a table-corpus index on disk (used by the CLI)."""

from __future__ import annotations

import hashlib
import logging
import shutil
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from tablerag_agents.config import Settings
from tablerag_agents.errors import (
    ConfigError,
    IndexNotFoundError,
    TableLoadError,
    UntrustedEngineError,
)
from tablerag_agents.models import get_chat_model, get_embeddings
from tablerag_agents.models.embeddings import embeddings_name
from tablerag_agents.retrieval.corpus import MANIFEST, CorpusIndex
from tablerag_agents.retrieval.corpus_config import TableHit
from tablerag_agents.retrieval.corpus_resume import RESUME_DIR, ResumeLog
from tablerag_agents.retrieval.corpus_run import DEFAULT_BATCH_SIZE, input_units, run_indexing
from tablerag_agents.retrieval.engine_trust import is_trusted, remember
from tablerag_agents.retrieval.engines import EngineConfig, VectorEngine
from tablerag_agents.tables.model import Table

logger = logging.getLogger(__name__)


def _new_engine(
    out: Path, backend: str | None, url: str | None, collection: str | None
) -> EngineConfig:
    """The engine of a new index (Qdrant or Milvus without a URL: a local store in ``out``)."""
    if backend is None:
        if url is not None or collection is not None:
            raise ConfigError("a new index on a vector engine needs --backend qdrant or milvus")
        return EngineConfig()
    if backend != "faiss" and url is None:
        url = str(out / ("qdrant" if backend == "qdrant" else "vectors.db"))
    return EngineConfig(backend, url, collection)


def _check_same_engine(
    out: Path, found: EngineConfig, backend: str | None, collection: str | None
) -> None:
    """Refuse to extend an index on another backend or collection than it uses."""
    if (backend is not None and backend != found.backend) or (
        collection is not None and collection != found.collection
    ):
        raise ConfigError(
            f"{out} is an index on {found.describe()} (collection {found.collection}); it "
            f"cannot be extended on {backend or found.backend} (collection {collection}): "
            "use --rebuild or another --out"
        )


def _rebuild(out: Path, wanted: EngineConfig, cache_dir: Path, trust: bool) -> None:
    """Delete the index at ``out``, and its engine collections when they are trusted."""
    if out.exists() and not (out / MANIFEST).is_file() and ResumeLog.exists(out):
        ResumeLog.discard(out)  # the first run into ``out`` was interrupted: start it anew
    elif out.exists():
        if not (out / MANIFEST).is_file():
            raise ValueError(f"refusing to delete {out}: it does not look like an index")
        old = CorpusIndex.engine_of(out)
        if old.backend != "faiss":
            if trust or is_trusted(cache_dir, out, old):
                engine = VectorEngine(old)
                engine.drop()
                engine.close()
            else:
                logger.warning("left the collections of %s in place (untrusted)", old.describe())
        shutil.rmtree(out)
    if wanted.collection is not None:
        engine = VectorEngine(wanted)  # the user named this collection: replace it
        engine.drop()
        engine.close()


def _fingerprint(path: Path) -> dict[str, Any]:
    """What identifies an input: its path, and size and mtime of it or of every file under it."""
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    digest = hashlib.sha256()
    for file in files:
        stat = file.stat()
        digest.update(f"{file.relative_to(path)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return {"path": str(path.resolve()), "files": len(files), "sha256": digest.hexdigest()}


def _run_key(
    paths: Sequence[Path],
    out: Path,
    *,
    ottqa: bool,
    passages: Path | None,
    embeddings: Embeddings,
    engine: tuple[str | None, str | None, str | None],
    batch_size: int,
    database: Sequence[Table] = (),
) -> dict[str, Any]:
    """What an indexing run depends on; a resumed run must match it (see :class:`ResumeLog`).

    Database tables count by their labels, which never hold a password.
    """
    manifest = out / MANIFEST
    base = hashlib.sha256(manifest.read_bytes()).hexdigest() if manifest.is_file() else None
    for path in paths:
        if not path.exists():
            raise TableLoadError(path, "no such file or directory")
    return {
        "inputs": [_fingerprint(p) for p in paths]
        + [{"database": str(t.metadata["source"])} for t in database],
        "ottqa": ottqa,
        "passages": _fingerprint(passages) if passages is not None else None,
        "embeddings": embeddings_name(embeddings),
        "engine": list(engine),
        "batch_size": batch_size,
        "base_index": base,
    }


def _resumed_engine(
    out: Path, log: ResumeLog, wanted: EngineConfig, cache_dir: Path
) -> EngineConfig:
    """The engine of a new index: the interrupted run's own collection, emptied, if any."""
    collection = log.extra.get("collection")
    if wanted.backend == "faiss" or not isinstance(collection, str):
        return wanted
    engine = replace(wanted, collection=collection) if wanted.collection is None else wanted
    if not is_trusted(cache_dir, out, engine):  # the log is inside an untrusted folder
        raise UntrustedEngineError(out / RESUME_DIR, engine.describe())
    dropped = VectorEngine(engine)
    dropped.drop()  # it holds the vectors of the interrupted run: they are added again
    dropped.close()
    return engine


def index_tables(
    paths: Sequence[Path],
    out: Path,
    *,
    settings: Settings,
    ottqa: bool = False,
    rebuild: bool = False,
    progress: bool = True,
    passages: Path | None = None,
    backend: str | None = None,
    url: str | None = None,
    collection: str | None = None,
    trust_engine: bool = False,
    workers: int = 1,
    batch_size: int = DEFAULT_BATCH_SIZE,
    db_url: str | None = None,
    db_tables: Sequence[str] = (),
) -> dict[str, Any]:
    """Index table files (or OTT-QA corpus JSON) into ``out``, adding to what is there.

    Tables whose id is already indexed are skipped (only new tables are
    embedded); unreadable files are skipped with a warning, never fatal.
    ``passages`` is a JSONL(.gz) file of linked-page texts (``{title, url,
    intro}`` lines): the cells' links are looked up in it to fill the BM25
    ``passages`` field, as in the benchmarked OTT-QA index; without it that
    field stays empty. ``backend``/``url``/``collection`` choose the vector
    engine of a new index (Qdrant or Milvus without a URL: a local store inside
    ``out``); the index is then trusted to reopen that engine.

    ``workers`` processes (0: one per core) parse the tables and build their
    BM25 fields while this process embeds. Every ``batch_size`` tables are
    committed to ``out/.resume`` (see :mod:`.corpus_resume`): rerun with the
    same arguments after a crash and the run continues from the last committed
    batch, giving the same index as an uninterrupted run.

    ``db_url`` (a PostgreSQL or SQLite SQLAlchemy URL, with no ``paths``)
    indexes the tables ``db_tables`` of that database instead: each is opened
    where it lives and the index keeps its bounded sample and its label (the
    URL without its password); they are all opened before anything is written.

    Returns:
        Counts (``added``, ``skipped``, ``total``, ``resumed_batches``) and ``seconds``.

    Raises:
        ResumeMismatchError: ``out`` holds an interrupted run with other arguments.
    """
    started = time.perf_counter()
    if passages is not None and not passages.is_file():
        raise FileNotFoundError(f"no passages file at {passages}")
    database: list[Table] = []
    if db_url is not None:
        if paths or ottqa:
            raise ValueError("index table files or a database's tables, not both")
        from tablerag_agents.tables.source_tables import load_database_tables

        database = load_database_tables(db_url, db_tables)
        workers = 1  # nothing to parse: the tables were read in their source workers
    embeddings = get_embeddings(settings)
    if rebuild:
        _rebuild(out, _new_engine(out, backend, url, collection), settings.cache_dir, trust_engine)
    try:
        found: EngineConfig | None = CorpusIndex.engine_of(out)
    except IndexNotFoundError:
        found = None
    if found is not None:
        _check_same_engine(out, found, backend, collection)
    key = _run_key(
        paths,
        out,
        ottqa=ottqa,
        passages=passages,
        embeddings=embeddings,
        engine=(backend, url, collection),
        batch_size=batch_size,
        database=database,
    )
    log = ResumeLog(out, key)
    if found is None:
        wanted = _new_engine(out, backend, url, collection)
        wanted = _resumed_engine(out, log, wanted, settings.cache_dir)
        index = CorpusIndex(embeddings, engine=wanted)
        if index.engine.backend != "faiss":
            log.remember(collection=index.engine.collection)
            remember(settings.cache_dir, out, index.engine)  # this run created it
    else:
        index = load_index(out, embeddings, settings.cache_dir, url=url, trust_engine=trust_engine)
    with index:
        stats = run_indexing(
            index,
            [(t.id, t) for t in database] if database else input_units(paths, ottqa=ottqa),
            log,
            batch_size=batch_size,
            workers=workers,
            passages_file=passages,
            progress=progress,
        )
        index.save(out)
        log.finish()
        remember(settings.cache_dir, out, index.engine)
        return {
            "added": stats.added,
            "skipped": stats.skipped,
            "total": len(index),
            "resumed_batches": stats.replayed,
            "seconds": time.perf_counter() - started,
            "engine": index.engine.describe(),
        }


def load_index(
    index_dir: Path,
    embeddings: Embeddings,
    cache_dir: Path,
    *,
    url: str | None = None,
    trust_engine: bool = False,
) -> CorpusIndex:
    """Open the index at ``index_dir``; its engine opens if trusted (see :mod:`.engine_trust`).

    ``url`` names the engine explicitly; ``trust_engine`` trusts the folder's
    own engine and remembers that choice in ``cache_dir``.

    Raises:
        UntrustedEngineError: The index names an engine that is not trusted.
    """
    engine = CorpusIndex.engine_of(index_dir)
    trusted = trust_engine or is_trusted(cache_dir, index_dir, engine)
    index = CorpusIndex.load(index_dir, embeddings, engine_url=url, trust_engine=trusted)
    if trust_engine and url is None:
        remember(cache_dir, index_dir, engine)
    return index


def open_index(
    index_dir: Path, settings: Settings, *, url: str | None = None, trust_engine: bool = False
) -> CorpusIndex:
    """Load the corpus index at ``index_dir`` with the configured embeddings."""
    return load_index(
        index_dir, get_embeddings(settings), settings.cache_dir, url=url, trust_engine=trust_engine
    )


def hit_dict(hit: TableHit) -> dict[str, Any]:
    """A JSON-friendly view of a table hit."""
    return {"table_id": hit.table_id, "score": float(hit.score), "caption": hit.caption}


def search_tables(
    question: str,
    index_dir: Path,
    *,
    settings: Settings,
    k: int = 5,
    method: str = "hybrid",
    rerank: bool = False,
    url: str | None = None,
    trust_engine: bool = False,
) -> list[dict[str, Any]]:
    """Return the ``k`` best tables of the index for ``question`` (see :func:`load_index`)."""
    with open_index(index_dir, settings, url=url, trust_engine=trust_engine) as index:
        model = get_chat_model(settings) if rerank else None
        hits = index.search(question, k=k, method=method, rerank_model=model)  # type: ignore[arg-type]
    return [hit_dict(h) for h in hits]
