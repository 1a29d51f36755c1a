"""Expensive objects shared by every question a process answers.

Loading the chat model, the embedding model or a corpus index, starting the
sandbox's warm workers and building a table's schema/cell index all cost
seconds. :class:`Resources` creates each one on first use, keeps it for the
next question, and closes what it created at :meth:`Resources.close` (or at
exit for :func:`default_resources`). Pass one ``Resources`` to the graph, the
tools or ``answer_question`` and they share it.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from tablerag_agents.config import Settings
from tablerag_agents.errors import TableLoadError, UnknownTableError
from tablerag_agents.tables import Table, load_table

if TYPE_CHECKING:
    import pandas as pd
    from langchain_core.embeddings import Embeddings
    from langchain_core.language_models import BaseChatModel

    from tablerag_agents.clarify import WikipediaProvider
    from tablerag_agents.retrieval.corpus import CorpusIndex
    from tablerag_agents.sandbox import Sandbox, SandboxPolicy
    from tablerag_agents.table_index import TableIndex

logger = logging.getLogger(__name__)

_MAX_REGISTERED_CORPORA = 8
"""Searchable corpora over subsets of the registered tables kept (one per scope)."""

_T = TypeVar("_T")


class _KeyedLoads:
    """One load per key at a time, different keys in parallel.

    The first caller of a key runs its loader (with no lock held); callers of
    the same key meanwhile wait for that result (or exception) instead of
    loading it again.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[Hashable, Future[object]] = {}

    def run(self, key: Hashable, load: Callable[[], _T]) -> _T:
        """``load()`` once for concurrent callers of ``key``; its result for all of them."""
        with self._lock:
            running = self._running.get(key)
            if running is None:
                future: Future[object] = Future()
                self._running[key] = future
        if running is not None:
            return running.result()  # type: ignore[return-value]
        try:
            value = load()
        except BaseException as exc:
            future.set_exception(exc)
            raise
        else:
            future.set_result(value)
            return value
        finally:
            with self._lock:
                del self._running[key]


def frame_fingerprint(df: pd.DataFrame) -> str:
    """A short content hash of a DataFrame (cells, column names and shape)."""
    import pandas as pd

    digest = hashlib.blake2b(digest_size=12)
    digest.update(repr((df.shape, [str(c) for c in df.columns])).encode())
    digest.update(pd.util.hash_pandas_object(df.astype(str), index=False).to_numpy().tobytes())
    return digest.hexdigest()


def _same_table(a: Table, b: Table) -> bool:
    """Whether two tables hold the same cells, caption and metadata."""
    try:
        same_meta = bool(a.metadata == b.metadata)
    except (TypeError, ValueError):  # values without a plain equality (arrays...)
        same_meta = False
    return (
        same_meta and a.caption == b.caption and frame_fingerprint(a.df) == frame_fingerprint(b.df)
    )


class Resources:
    """Lazily created, shared chat model, embeddings, sandbox, indexes and tables.

    Args:
        settings: Where models come from (default: :class:`Settings` from env/TOML).
        chat_model: Use this chat model instead of creating one.
        embeddings: Use these embeddings instead of creating them.
        sandbox: Use this sandbox (not closed by :meth:`close`).
        sandbox_policy: Policy of the sandbox created on first use.
        wikipedia: Use this Wikipedia provider instead of the configured one.
        max_table_indexes: How many per-table schema/cell indexes to keep.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        chat_model: BaseChatModel | None = None,
        embeddings: Embeddings | None = None,
        sandbox: Sandbox | None = None,
        sandbox_policy: SandboxPolicy | None = None,
        wikipedia: WikipediaProvider | None = None,
        max_table_indexes: int = 16,
    ) -> None:
        """Store what is given; everything else is created on first use."""
        self.settings = settings or Settings()
        self._chat_model = chat_model
        self._embeddings = embeddings
        self._sandbox = sandbox
        self._owns_sandbox = sandbox is None
        self._sandbox_policy = sandbox_policy
        self._max_table_indexes = max_table_indexes
        # Guards the dicts below. Loads go through _loads, never under it; the one slow
        # step under it is embedding newly registered tables (_sync_registered).
        self._lock = threading.RLock()
        self._loads = _KeyedLoads()
        self._tables: dict[str, Table] = {}
        self._files: dict[tuple[str, float, int], Table] = {}
        self._corpora: dict[str, CorpusIndex] = {}
        self._registered: CorpusIndex | None = None  # every registered table, kept in sync
        self._indexed: dict[str, Table] = {}  # what ``_registered`` holds, by id
        self._registered_corpora: OrderedDict[frozenset[str], CorpusIndex] = OrderedDict()
        self._wikipedia = wikipedia
        self._table_indexes: OrderedDict[tuple[str, str, int], TableIndex] = OrderedDict()
        self._closed = False

    # -- models and the sandbox ---------------------------------------------------------

    @property
    def chat_model(self) -> BaseChatModel:
        """The chat model (created from the settings on first use)."""
        if (loaded := self._chat_model) is not None:
            return loaded
        return self._loads.run("chat_model", self._load_chat_model)

    def _load_chat_model(self) -> BaseChatModel:
        if self._chat_model is None:
            from tablerag_agents.models import get_chat_model

            self._chat_model = get_chat_model(self.settings)
        return self._chat_model

    @property
    def embeddings(self) -> Embeddings:
        """The embedding model (loaded once)."""
        if (loaded := self._embeddings) is not None:
            return loaded
        return self._loads.run("embeddings", self._load_embeddings)

    def _load_embeddings(self) -> Embeddings:
        if self._embeddings is None:
            from tablerag_agents.models import get_embeddings

            self._embeddings = get_embeddings(self.settings)
        return self._embeddings

    @property
    def sandbox(self) -> Sandbox:
        """The sandbox every code-running stage shares (fails closed without bwrap)."""
        if self._closed:
            raise RuntimeError("these resources are closed")
        if (loaded := self._sandbox) is not None:
            return loaded
        return self._loads.run("sandbox", self._load_sandbox)

    def _load_sandbox(self) -> Sandbox:
        if self._sandbox is None:
            from tablerag_agents.sandbox import Sandbox

            sandbox = Sandbox(self._sandbox_policy)  # starts a worker: not under the lock
            with self._lock:  # close() must not miss a sandbox created meanwhile
                closed = self._closed
                if not closed:
                    self._sandbox = sandbox
            if closed:
                sandbox.close()
                raise RuntimeError("these resources are closed")
            return sandbox
        return self._sandbox

    @property
    def wikipedia(self) -> WikipediaProvider:
        """The Wikipedia provider the settings choose (online, offline corpus, or both)."""
        if (loaded := self._wikipedia) is not None:
            return loaded
        return self._loads.run("wikipedia", self._load_wikipedia)

    @wikipedia.setter
    def wikipedia(self, provider: WikipediaProvider) -> None:
        """Replace the provider (for example by a wrapper around the configured one)."""
        with self._lock:
            self._wikipedia = provider

    def _load_wikipedia(self) -> WikipediaProvider:
        if self._wikipedia is None:
            from tablerag_agents.clarify import get_wikipedia_provider

            self._wikipedia = get_wikipedia_provider(self.settings)
        return self._wikipedia

    @property
    def has_sandbox(self) -> bool:
        """True once a sandbox exists (given or created)."""
        return self._sandbox is not None

    # -- tables -------------------------------------------------------------------------

    def add_table(self, table: Table) -> str:
        """Register an in-memory table under its id (replacing one with the same id).

        The registered corpus embeds only this table, at its next use; an equal
        table under the same id (same cells, caption and metadata) changes nothing.
        """
        with self._lock:
            old = self._tables.get(table.id)
            if old is not None and old is not table and _same_table(old, table):
                return table.id
            self._tables[table.id] = table
            if old is not None:
                self._forget_scopes(table.id)
        return table.id

    def add_file(self, path: str | Path) -> str:
        """Load a table file you trust and register it; returns its id.

        The graph and the tools only resolve ids: this is how a caller that
        holds a file path (the CLI, :func:`~tablerag_agents.qa.answer_question`)
        hands the table over. A file is read again only when it changed.

        Raises:
            TableLoadError: The file cannot be read.
        """
        resolved = Path(path).resolve()
        try:
            stat = resolved.stat()
        except OSError as exc:
            raise TableLoadError(path, f"cannot open: {exc.strerror or exc}") from None
        key = (str(resolved), stat.st_mtime, stat.st_size)
        with self._lock:
            table = self._files.get(key)
        if table is None:
            table = self._loads.run(("file", key), lambda: self._load_file(key))
        return self.add_table(table)

    def _load_file(self, key: tuple[str, float, int]) -> Table:
        with self._lock:
            table = self._files.get(key)
        if table is None:
            table = load_table(key[0])
            with self._lock:
                self._files[key] = table
        return table

    def remove_table(self, table_id: str) -> bool:
        """Unregister a table; False if no table has this id."""
        with self._lock:
            if self._tables.pop(table_id, None) is None:
                return False
            self._forget_scopes(table_id)
            return True

    def _forget_scopes(self, table_id: str) -> None:
        """Drop the cached scoped corpora that hold ``table_id`` (caller holds the lock)."""
        for key in [k for k in self._registered_corpora if table_id in k]:
            del self._registered_corpora[key]

    def registered_corpus(self, ids: Iterable[str] | None = None) -> CorpusIndex:
        """An in-memory corpus index over the registered tables, updated incrementally.

        One index holds every registered table: a table added since the last
        call is embedded (only it), a removed or replaced one is deleted. A
        scope (``ids``) is a copy of its tables' stored vectors and texts
        (:meth:`CorpusIndex.subset`), cached per scope: nothing is re-embedded.

        Args:
            ids: Only these registered tables (default: all of them).

        Raises:
            ValueError: If no (such) table is registered.
        """
        with self._lock:
            wanted = self._tables.keys() if ids is None else set(ids) & self._tables.keys()
            key = frozenset(wanted)
            if not key:
                raise ValueError("no tables registered: add tables or give a corpus index")
            corpus = self._sync_registered()
            if len(key) == len(self._tables):
                return corpus
            scoped = self._registered_corpora.get(key)
            if scoped is None:
                scoped = corpus.subset(t for t in self._tables if t in key)
                self._registered_corpora[key] = scoped
                while len(self._registered_corpora) > _MAX_REGISTERED_CORPORA:
                    self._registered_corpora.popitem(last=False)
            self._registered_corpora.move_to_end(key)
            return scoped

    def _sync_registered(self) -> CorpusIndex:
        """Bring the all-tables index up to date with the registry (caller holds the lock)."""
        if self._registered is None:
            from tablerag_agents.retrieval.corpus import CorpusIndex

            self._registered = CorpusIndex(self.embeddings)
        stale = [t for t, table in self._indexed.items() if self._tables.get(t) is not table]
        if stale:
            self._registered.remove_tables(stale)
            for table_id in stale:
                del self._indexed[table_id]
        new = [t for t in self._tables.values() if t.id not in self._indexed]
        if new:
            self._registered.add_tables(new, progress=False)
            self._indexed.update((t.id, t) for t in new)
        return self._registered

    @property
    def table_ids(self) -> list[str]:
        """Ids of the registered in-memory tables."""
        with self._lock:
            return list(self._tables)

    def corpus(self, index_dir: str | Path) -> CorpusIndex:
        """The corpus index saved at ``index_dir`` (loaded once per folder).

        ``index_dir`` is configuration (a deployment's or a caller's own
        folder), never a value taken from a request. An index on Qdrant or
        Milvus opens its engine only if this user trusts it (built here, or
        ``tablerag search --trust-engine``): see ``retrieval.engine_trust``.
        """
        key = str(Path(index_dir).resolve())
        with self._lock:
            index = self._corpora.get(key)
        if index is None:
            index = self._loads.run(("corpus", key), lambda: self._load_corpus(key))
        return index

    def _load_corpus(self, key: str) -> CorpusIndex:
        with self._lock:
            if (index := self._corpora.get(key)) is not None:
                return index
        from tablerag_agents.retrieval.corpus_folder import load_index

        index = load_index(Path(key), self.embeddings, self.settings.cache_dir)
        with self._lock:
            self._corpora[key] = index
        return index

    def get_table(self, ref: str, index_dir: str | Path | None = None) -> Table:
        """Resolve a table id: a registered table, else a table of the corpus at ``index_dir``.

        A reference is never opened as a file (register files with
        :meth:`add_file`).

        Raises:
            UnknownTableError: ``ref`` names no registered table nor a table
                of the corpus.
        """
        with self._lock:
            if ref in self._tables:
                return self._tables[ref]
        if index_dir is not None and (table := self.corpus_table(ref, index_dir)) is not None:
            return table
        raise UnknownTableError(ref, self.table_ids)

    def corpus_table(self, ref: str, index_dir: str | Path) -> Table | None:
        """The table ``ref`` of the corpus at ``index_dir`` (None: no such id there).

        Raises:
            TableLoadError: The id is indexed but the index stores no table data.
        """
        corpus = self.corpus(index_dir)
        if ref not in corpus:
            return None
        try:
            return corpus.get_table(ref)
        except KeyError:
            raise TableLoadError(ref, "indexed, but the index stores no table data") from None

    def table_index(self, table: Table, *, budget: int) -> TableIndex:
        """The schema/cell index of ``table`` under ``budget`` (built once, LRU-cached)."""
        from tablerag_agents.table_index import TableIndex

        key = (table.id, frame_fingerprint(table.df), budget)
        with self._lock:
            cached = self._table_indexes.get(key)
            if cached is not None:
                self._table_indexes.move_to_end(key)
                return cached

        def build() -> TableIndex:
            with self._lock:
                if (done := self._table_indexes.get(key)) is not None:
                    return done
            index = TableIndex.build(table, self.embeddings, budget=budget)
            with self._lock:
                self._table_indexes[key] = index
                while len(self._table_indexes) > self._max_table_indexes:
                    self._table_indexes.popitem(last=False)
            return index

        return self._loads.run(("table_index", key), build)

    # -- lifetime -----------------------------------------------------------------------

    def close(self) -> None:
        """Close the sandbox this object created and drop the caches."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._sandbox is not None and self._owns_sandbox:
                self._sandbox.close()
            self._table_indexes.clear()
            for corpus in self._corpora.values():
                corpus.close()
            self._corpora.clear()
            self._files.clear()
            self._registered_corpora.clear()
            self._registered = None
            self._indexed.clear()

    def __enter__(self) -> Resources:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_DEFAULT: Resources | None = None
_DEFAULT_LOCK = threading.Lock()


def default_resources() -> Resources:
    """The process-wide resources (created on first use, closed at exit)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None or _DEFAULT._closed:
            _DEFAULT = Resources()
        return _DEFAULT


@atexit.register
def close_default_resources() -> None:
    """Close the process-wide resources (runs at exit)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is not None:
            _DEFAULT.close()
            _DEFAULT = None
