"""Build, extend and search a table-corpus index on disk (used by the CLI)."""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from tablerag_agents.config import Settings
from tablerag_agents.errors import ConfigError, IndexNotFoundError, TableLoadError
from tablerag_agents.models import get_chat_model, get_embeddings
from tablerag_agents.retrieval.corpus import CorpusIndex
from tablerag_agents.retrieval.corpus_config import TableHit
from tablerag_agents.retrieval.corpus_fields import LinkedPassages
from tablerag_agents.retrieval.engine_trust import is_trusted, remember
from tablerag_agents.retrieval.engines import EngineConfig, VectorEngine
from tablerag_agents.tables import Table, load_ottqa_corpus, load_tables

logger = logging.getLogger(__name__)


def _read_tables(paths: Sequence[Path], *, ottqa: bool) -> Iterator[Table]:
    """Yield the tables of every path; unreadable files are skipped with a warning."""
    for path in paths:
        if not path.exists():
            raise TableLoadError(path, "no such file or directory")
        if ottqa:
            yield from load_ottqa_corpus(path)
        else:
            yield from load_tables(path, on_error="warn")


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
    if out.exists():
        if not (out / "manifest.json").is_file():
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

    Returns:
        Counts (``added``, ``skipped``, ``total``) and ``seconds``.
    """
    started = time.perf_counter()
    embeddings = get_embeddings(settings)
    if rebuild:
        _rebuild(out, _new_engine(out, backend, url, collection), settings.cache_dir, trust_engine)
    try:
        found: EngineConfig | None = CorpusIndex.engine_of(out)
    except IndexNotFoundError:
        found = None
    if found is None:
        index = CorpusIndex(embeddings, engine=_new_engine(out, backend, url, collection))
    else:
        _check_same_engine(out, found, backend, collection)
        index = load_index(out, embeddings, settings.cache_dir, url=url, trust_engine=trust_engine)
    with index:
        unique: list[Table] = []
        seen: set[str] = set()
        skipped = 0
        for table in _read_tables(paths, ottqa=ottqa):
            if table.id in index or table.id in seen:
                skipped += 1
                continue
            seen.add(table.id)
            unique.append(table)
        lookup = None
        if passages is not None:
            if not passages.is_file():
                raise FileNotFoundError(f"no passages file at {passages}")
            lookup = LinkedPassages.from_jsonl(passages)
            logger.info("loaded %d linked passages from %s", len(lookup), passages)
        if unique:
            index.add_tables(unique, passages=lookup, progress=progress)
        index.save(out)
        remember(settings.cache_dir, out, index.engine)
        return {
            "added": len(unique),
            "skipped": skipped,
            "total": len(index),
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
