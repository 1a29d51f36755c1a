"""Typed errors raised by the engine; each carries the value that caused it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


class TableRAGError(Exception):
    """Base class for every error this library raises on purpose."""


class TableLoadError(TableRAGError):
    """A table could not be read or is unusable (missing, empty, garbage...)."""

    def __init__(self, source: str | Path, reason: str) -> None:
        self.source = str(source)
        self.reason = reason
        super().__init__(f"cannot load table from {self.source!r}: {reason}")


class ConfigError(TableRAGError):
    """A configuration value is missing or invalid."""


class WikiCorpusError(TableRAGError):
    """An offline Wikipedia corpus file is missing or malformed."""

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"cannot read Wikipedia corpus {self.path!r}: {reason}")


class ModelError(TableRAGError):
    """A chat or embedding model could not be created or started."""


class DatabaseError(TableRAGError):
    """The server's database (threads and checkpoints) cannot be opened or used."""


class CorpusIndexError(TableRAGError):
    """Base for problems with a saved corpus index (missing, stale, unsafe)."""


class StaleIndexError(CorpusIndexError):
    """An index on disk was built with other embeddings or parameters."""

    def __init__(
        self, path: str | Path, expected: dict[str, object], found: dict[str, object]
    ) -> None:
        self.path = str(path)
        self.expected = expected
        self.found = found
        diff = {k: (found.get(k), v) for k, v in expected.items() if found.get(k) != v}
        super().__init__(
            f"index at {self.path!r} was built with different settings "
            f"(found vs expected: {diff}); rebuild it with `tablerag index --rebuild`"
        )


class IndexNotFoundError(CorpusIndexError):
    """No index exists at the given path."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        super().__init__(f"no index found at {self.path!r}; create one with `tablerag index`")


class UnsafeIndexError(CorpusIndexError):
    """A saved index names a file outside its own folder (absolute path, ``..``, symlink)."""

    def __init__(self, path: str | Path, name: object, reason: str) -> None:
        self.path = str(path)
        self.name = name
        self.reason = reason
        super().__init__(f"refusing index at {self.path!r}: file {name!r} {reason}")


class MalformedIndexError(UnsafeIndexError):
    """A saved index file is not what its header claims (sizes, type), so it is not read."""


class UntrustedEngineError(CorpusIndexError):
    """A saved index names a vector engine (server URL, local store) the caller did not trust."""

    def __init__(self, path: str | Path, engine: str) -> None:
        self.path = str(path)
        self.engine = engine
        super().__init__(
            f"index at {self.path!r} keeps its vectors in {engine}, as its manifest says; "
            "it is opened only when you name the URL yourself (--url) or trust this folder "
            "(--trust-engine; indexes you built here are trusted)"
        )


class ResumeMismatchError(CorpusIndexError):
    """An interrupted indexing run cannot be resumed with other arguments than it started with."""

    def __init__(
        self, path: str | Path, expected: dict[str, object], found: dict[str, object]
    ) -> None:
        self.path = str(path)
        self.expected = expected
        self.found = found
        keys = sorted(set(expected) | set(found))
        diff = {k: (found.get(k), expected.get(k)) for k in keys if found.get(k) != expected.get(k)}
        super().__init__(
            f"{self.path!r} holds an interrupted indexing run started with other arguments "
            f"(then vs now: {diff}); rerun it with the same arguments to resume, or delete "
            f"{self.path!r} to start this run anew"
        )


class SandboxUnavailableError(TableRAGError):
    """The sandbox cannot run here; we refuse instead of running code unsafely."""


class SandboxError(TableRAGError):
    """The sandboxed worker failed (crash, protocol error), not the user code."""


class UnknownTableError(TableLoadError):
    """A table reference names no table the caller may use; file paths are never opened.

    Args:
        ref: The reference as given.
        known: Ids the caller may use (the first ten are listed).
    """

    def __init__(self, ref: str, known: Sequence[str] = ()) -> None:
        self.known = list(known)
        listed = ", ".join(self.known[:10]) or "none"
        if len(self.known) > 10:
            listed += f" and {len(self.known) - 10} more"
        super().__init__(ref, f"no table with this id (ids: {listed})")
        self.args = (
            f"unknown table {ref!r}: tables are named by id (ids: {listed}); a file path is "
            "never opened here: load and register the file first",
        )


class GraphRunError(TableRAGError, RuntimeError):
    """A library error inside a node, raised again so a LangGraph API server shows it.

    langgraph-api replaces the message of most exception types by "An internal
    error occurred" and keeps it for a few builtin ones (ValueError,
    RuntimeError...): the served graph raises this instead, naming the
    original type in the message and keeping it as ``__cause__``.
    """


class WorkerError(TableRAGError):
    """The bounded worker process failed (did not start, crashed, broke the protocol)."""


class WorkerLimitError(TableRAGError):
    """Work in the bounded worker went past one of its limits.

    Attributes:
        limit: ``"memory"``, ``"CPU time"`` or ``"wall clock"``.
        value: The limit's value with its unit (``"2048 MB"``, ``"60 s"``).
    """

    def __init__(self, limit: str, value: str, detail: str = "") -> None:
        self.limit = limit
        self.value = value
        self.detail = detail
        extra = f" ({detail})" if detail else ""
        super().__init__(f"exceeded the {limit} limit of {value}{extra}")


class TableLimitError(TableLoadError):
    """A table file went past a load limit (memory, CPU time, wall clock, cells, columns).

    Attributes:
        limit: Which limit (``"memory"``, ``"CPU time"``, ``"wall clock"``, ``"cells"``,
            ``"columns"``, ``"result size"``).
        value: The limit's value with its unit.
        detail: What went past it, when known.
    """

    def __init__(self, source: str | Path, limit: str, value: str, detail: str = "") -> None:
        self.limit = limit
        self.value = value
        self.detail = detail
        extra = f": {detail}" if detail else ""
        super().__init__(source, f"exceeded the {limit} limit of {value}{extra}")


class ChartError(TableRAGError):
    """A chart drawn by model-written code could not be returned.

    No figure was drawn, it went past a size limit, or what came back from the
    sandbox is not a well-formed PNG; the message names the limit and the value.
    """
