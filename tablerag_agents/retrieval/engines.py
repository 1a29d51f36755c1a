"""Where a corpus index keeps its dense vectors: FAISS files, a Qdrant or a Milvus collection.

:class:`EngineConfig` is what the index's ``manifest.json`` records;
:class:`VectorEngine` opens it and hands each dense channel (``dense``,
``rows``) its own :class:`~.vector_index.VectorIndex` store:

- ``faiss`` (default): ``FaissVectorStore`` files inside the index folder.
- ``qdrant`` (``[qdrant]`` extra): ``url`` is a server (``http://host:6333``;
  the API key comes from ``QDRANT_API_KEY``), a local folder (Qdrant's local
  mode, for development: it writes one SQLite commit per point and stores points
  with pickle) or ``:memory:``.
- ``milvus`` (``[milvus]`` extra): ``url`` is a server (``http://host:19530``;
  the token comes from ``MILVUS_TOKEN``) or a Milvus Lite file ending in ``.db``.

Collections are named ``<collection>_<channel>``; ``collection`` defaults to a
fresh ``tablerag_<12 hex>`` so two indexes never share one.
"""

from __future__ import annotations

import logging
import os
import re
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from tablerag_agents.errors import ConfigError
from tablerag_agents.retrieval.vector_index import VectorIndex
from tablerag_agents.retrieval.vectorstore import FaissVectorStore

logger = logging.getLogger(__name__)

BACKENDS = ("faiss", "qdrant", "milvus")
_COLLECTION = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,180}$")
_MEMORY = ":memory:"
_EXTRAS = {"qdrant": "qdrant", "milvus": "milvus"}


def is_server_url(url: str) -> bool:
    """Whether ``url`` names a server (``scheme://...``) rather than a local path."""
    return "://" in url


@dataclass(frozen=True)
class EngineConfig:
    """The vector engine of a corpus index.

    Attributes:
        backend: ``faiss``, ``qdrant`` or ``milvus``.
        url: Server URL or local location (see the module docstring); a local
            path is made absolute. None: FAISS (no URL).
        collection: Prefix of the engine's collection names.
    """

    backend: str = "faiss"
    url: str | None = None
    collection: str | None = None

    def __post_init__(self) -> None:
        """Check the values (they may come from a saved index)."""
        if self.backend not in BACKENDS:
            raise ConfigError(f"unknown vector backend {self.backend!r}; use one of {BACKENDS}")
        if self.backend == "faiss":
            if self.url is not None or self.collection is not None:
                raise ConfigError("the faiss backend keeps its vectors in the index folder: no URL")
            return
        if not isinstance(self.url, str) or not self.url.strip():
            raise ConfigError(f"the {self.backend} backend needs a URL or a local path")
        if self.collection is not None and not (
            isinstance(self.collection, str) and _COLLECTION.match(self.collection)
        ):
            raise ConfigError(
                f"collection name {self.collection!r} must be letters, digits and underscores "
                "(starting with a letter or underscore, at most 181 characters)"
            )
        local = not is_server_url(self.url) and self.url != _MEMORY
        if self.backend == "milvus" and local and not self.url.endswith(".db"):
            raise ConfigError(f"a Milvus Lite file must end in .db, not {self.url!r}")
        if self.backend == "milvus" and self.url == _MEMORY:
            raise ConfigError("Milvus has no in-memory mode: give a .db file or a server URL")
        if local and not Path(self.url).is_absolute():
            object.__setattr__(self, "url", str(Path(self.url).resolve()))

    @property
    def is_server(self) -> bool:
        """Whether the vectors live on a server (reached over the network)."""
        return self.url is not None and is_server_url(self.url)

    def with_collection(self) -> EngineConfig:
        """This config, with a fresh collection prefix when it has none (FAISS: as is)."""
        if self.backend == "faiss" or self.collection is not None:
            return self
        return replace(self, collection=f"tablerag_{uuid.uuid4().hex[:12]}")

    def collection_name(self, channel: str) -> str:
        """The engine collection of one channel."""
        return f"{self.collection}_{channel}"

    def to_manifest(self, folder: Path) -> dict[str, Any]:
        """The JSON the index manifest records (a local path inside ``folder`` as relative)."""
        url = self.url
        if url is not None and not is_server_url(url) and url != _MEMORY:
            path = Path(url)
            if path.is_relative_to(folder.resolve()):
                url = str(path.relative_to(folder.resolve()))
        return {"backend": self.backend, "url": url, "collection": self.collection}

    @classmethod
    def from_manifest(cls, data: object, folder: Path) -> EngineConfig:
        """Read what :meth:`to_manifest` wrote (absent: FAISS); relative paths are under ``folder``.

        Raises:
            ConfigError: The entry is malformed.
        """
        if data is None:
            return cls()
        if not isinstance(data, dict) or set(data) - {"backend", "url", "collection"}:
            raise ConfigError(f"malformed 'engine' entry in the manifest of {folder}: {data!r}")
        url = data.get("url")
        if isinstance(url, str) and not is_server_url(url) and url != _MEMORY:
            url = str((folder.resolve() / url).resolve())
        return cls(str(data.get("backend")), url, data.get("collection"))

    def describe(self) -> str:
        """A short human description (``qdrant at http://...``)."""
        return (
            "faiss (index folder)" if self.backend == "faiss" else f"{self.backend} at {self.url}"
        )


class VectorEngine:
    """An open vector engine: one store per dense channel, one connection for all.

    Args:
        config: Where the vectors live (a collection prefix is required for engines).
    """

    def __init__(self, config: EngineConfig) -> None:
        """Connect lazily: nothing is opened before the first store."""
        if config.backend != "faiss" and config.collection is None:
            raise ConfigError("an engine-backed index needs a collection prefix")
        self.config = config
        self._client: Any = None
        self._stores: list[VectorIndex] = []

    def new_store(self, channel: str, embeddings: Embeddings) -> VectorIndex:
        """An empty store for a new index.

        Raises:
            ConfigError: The engine already holds vectors in this channel's collection.
        """
        store = self._store(channel, embeddings)
        if self.config.backend != "faiss" and len(store) > 0:
            name = self.config.collection_name(channel)
            raise ConfigError(
                f"{self.config.describe()} already holds collection {name!r} with {len(store)} "
                "vectors: choose another collection, or rebuild to replace it"
            )
        return store

    def open_store(self, channel: str, embeddings: Embeddings, folder: Path) -> VectorIndex:
        """The store of a saved index (FAISS reads ``folder/channel``)."""
        if self.config.backend == "faiss":
            store: VectorIndex = FaissVectorStore.load(folder / channel, embeddings)
            self._stores.append(store)
            return store
        return self._store(channel, embeddings)

    def drop(self, channels: tuple[str, ...] = ("dense", "rows")) -> None:
        """Delete the channels' collections from the engine (FAISS: nothing to do)."""
        if self.config.backend == "faiss":
            return
        for channel in channels:
            store = self._store(channel, _NoEmbeddings())
            store.drop()  # type: ignore[attr-defined]

    def _store(self, channel: str, embeddings: Embeddings) -> VectorIndex:
        backend = self.config.backend
        if backend == "faiss":
            store: VectorIndex = FaissVectorStore(embeddings)
        elif backend == "qdrant":
            store = self._qdrant_store(channel, embeddings)
        else:
            store = self._milvus_store(channel, embeddings)
        self._stores.append(store)
        return store

    def _qdrant_store(self, channel: str, embeddings: Embeddings) -> VectorIndex:
        try:
            from qdrant_client import QdrantClient

            from tablerag_agents.retrieval.qdrant_store import QdrantVectors
        except ImportError as exc:
            raise _missing_extra("qdrant", exc) from None
        url = self.config.url
        assert url is not None
        if self._client is None:
            if is_server_url(url):
                self._client = QdrantClient(url=url, api_key=os.environ.get("QDRANT_API_KEY"))
            elif url == _MEMORY:
                self._client = QdrantClient(location=_MEMORY)
            else:
                Path(url).mkdir(parents=True, exist_ok=True)
                try:
                    self._client = QdrantClient(path=url, force_disable_check_same_thread=True)
                except RuntimeError as exc:  # another client holds the folder's lock
                    raise ConfigError(f"cannot open the Qdrant folder {url}: {exc}") from None
        return QdrantVectors(self._client, self.config.collection_name(channel), embeddings)

    def _milvus_store(self, channel: str, embeddings: Embeddings) -> VectorIndex:
        try:
            from tablerag_agents.retrieval.milvus_store import MilvusVectors
        except ImportError as exc:
            raise _missing_extra("milvus", exc) from None
        url = self.config.url
        assert url is not None
        server = is_server_url(url)
        if not server:
            Path(url).parent.mkdir(parents=True, exist_ok=True)
        return MilvusVectors(
            url,
            self.config.collection_name(channel),
            embeddings,
            token=os.environ.get("MILVUS_TOKEN") if server else None,
            index_type="AUTOINDEX" if server else "FLAT",
        )

    def close(self) -> None:
        """Release every store and the engine connection."""
        for store in self._stores:
            store.close()
        self._stores.clear()
        if self._client is not None:
            self._client.close()
            self._client = None


class _NoEmbeddings(Embeddings):
    """Placeholder for stores opened only to be dropped."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise RuntimeError("no embeddings: this store is only dropped")

    def embed_query(self, text: str) -> list[float]:
        raise RuntimeError("no embeddings: this store is only dropped")


def _missing_extra(backend: str, exc: ImportError) -> ConfigError:
    extra = _EXTRAS[backend]
    return ConfigError(
        f"the {backend} backend needs the [{extra}] extra "
        f"(pip install 'tablerag-agents[{extra}]'): {exc}"
    )
