"""Which engine-backed indexes may open the engine their own manifest names.

A saved index folder may come from someone else. A FAISS index is read with
checks (:mod:`.faiss_file`), but an index on Qdrant or Milvus names an engine
location in its manifest: a server URL (opening it contacts that host), a local
Qdrant folder (whose points Qdrant unpickles) or a Milvus Lite file. So
:meth:`~.corpus.CorpusIndex.load` opens the manifest's engine only when the
caller trusts it; otherwise the caller must name the URL itself.

This module keeps the user's list of trusted ``(index folder, engine)`` pairs
in ``<cache_dir>/trusted_engines.json``: ``tablerag index`` adds the indexes it
creates, ``tablerag search --trust-engine`` adds one the user vouches for. An
entry matches only the same folder naming the same backend, URL and
collection: a folder edited to point elsewhere is no longer trusted.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from tablerag_agents.retrieval.engines import EngineConfig

logger = logging.getLogger(__name__)

TRUST_FILE = "trusted_engines.json"
MAX_ENTRIES = 1000
"""Oldest entries are dropped beyond this many."""
_MAX_FILE_BYTES = 1 << 20


def _entry(folder: Path, engine: EngineConfig) -> dict[str, str | None]:
    return {
        "index": str(folder.resolve()),
        "backend": engine.backend,
        "url": engine.url,
        "collection": engine.collection,
    }


def _read(path: Path) -> list[dict[str, str | None]]:
    try:
        if path.stat().st_size > _MAX_FILE_BYTES:
            logger.warning("ignoring %s: larger than %d bytes", path, _MAX_FILE_BYTES)
            return []
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        logger.warning("ignoring unreadable %s: %s", path, exc)
        return []
    return [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []


def is_trusted(cache_dir: Path, folder: Path, engine: EngineConfig) -> bool:
    """Whether the user trusts ``folder`` to open ``engine`` (FAISS needs no trust)."""
    if engine.backend == "faiss":
        return True
    return _entry(folder, engine) in _read(Path(cache_dir) / TRUST_FILE)


def remember(cache_dir: Path, folder: Path, engine: EngineConfig) -> None:
    """Trust ``folder`` with ``engine`` from now on (written atomically)."""
    if engine.backend == "faiss":
        return
    path = Path(cache_dir) / TRUST_FILE
    entry = _entry(folder, engine)
    entries = [e for e in _read(path) if e != entry] + [entry]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(entries[-MAX_ENTRIES:], indent=1), encoding="utf-8")
    tmp.replace(path)
