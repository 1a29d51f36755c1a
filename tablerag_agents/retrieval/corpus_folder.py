"""Build, extend and search a table-corpus index on disk (used by the CLI)."""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from tablerag_agents.config import Settings
from tablerag_agents.errors import IndexNotFoundError, TableLoadError
from tablerag_agents.models import get_chat_model, get_embeddings
from tablerag_agents.retrieval.corpus import CorpusIndex
from tablerag_agents.retrieval.corpus_config import TableHit
from tablerag_agents.retrieval.corpus_fields import LinkedPassages
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


def index_tables(
    paths: Sequence[Path],
    out: Path,
    *,
    settings: Settings,
    ottqa: bool = False,
    rebuild: bool = False,
    progress: bool = True,
    passages: Path | None = None,
) -> dict[str, Any]:
    """Index table files (or OTT-QA corpus JSON) into ``out``, adding to what is there.

    Tables whose id is already indexed are skipped; unreadable files are
    skipped with a warning, never fatal. ``passages`` is a JSONL(.gz) file of
    linked-page texts (``{title, url, intro}`` lines): the cells' links are
    looked up in it to fill the BM25 ``passages`` field, as in the benchmarked
    OTT-QA index; without it that field stays empty.

    Returns:
        Counts (``added``, ``skipped``, ``total``) and ``seconds``.
    """
    started = time.perf_counter()
    embeddings = get_embeddings(settings)
    if rebuild and out.exists():
        if not (out / "manifest.json").is_file():
            raise ValueError(f"refusing to delete {out}: it does not look like an index")
        shutil.rmtree(out)
    try:
        index = CorpusIndex.load(out, embeddings)
    except IndexNotFoundError:
        index = CorpusIndex(embeddings)
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
    return {
        "added": len(unique),
        "skipped": skipped,
        "total": len(index),
        "seconds": time.perf_counter() - started,
    }


def open_index(index_dir: Path, settings: Settings) -> CorpusIndex:
    """Load the corpus index at ``index_dir`` with the configured embeddings."""
    return CorpusIndex.load(index_dir, get_embeddings(settings))


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
) -> list[dict[str, Any]]:
    """Return the ``k`` best tables of the index for ``question``."""
    index = open_index(index_dir, settings)
    model = get_chat_model(settings) if rerank else None
    hits = index.search(question, k=k, method=method, rerank_model=model)  # type: ignore[arg-type]
    return [hit_dict(h) for h in hits]
