"""The limits one task in a bounded worker runs under, and how a memory breach looks."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MIB = 1024 * 1024


class WorkerLimits(BaseModel):
    """Memory, CPU-time and wall-clock limits of one task.

    ``memory_bytes`` is the address space (``RLIMIT_AS``) the task may add to the
    warm worker's own (Python, pandas, DuckDB: about 0.5 GB of address space,
    ~160 MB resident), so the limit means the same on every machine.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    memory_bytes: int | None = Field(
        default=2048 * MIB, ge=16 * MIB, description="Address space the task may add (None: any)."
    )
    cpu_seconds: float = Field(default=60.0, gt=0, description="CPU time of the task.")
    wall_seconds: float = Field(
        default=120.0, gt=0, description="Wall-clock time; the host kills the worker after it."
    )

    def describe(self, limit: str) -> str:
        """The value of ``limit`` (``memory``, ``CPU time``, ``wall clock``) with its unit."""
        if limit == "memory":
            return "none" if self.memory_bytes is None else f"{self.memory_bytes // MIB} MB"
        seconds = self.cpu_seconds if limit == "CPU time" else self.wall_seconds
        return f"{seconds:g} s"


#: What failed allocations say (C++ bad_alloc, DuckDB, Arrow, Python): with a
#: memory-ish exception type name, they mark a breach of the memory limit.
_MEMORY_TEXT = (
    "bad_alloc",
    "cannot allocate memory",
    "out of memory",
    "failed to allocate",
    "memoryerror",
    "realloc of size",
    "malloc of size",
)


def memory_cause(exc: BaseException) -> BaseException | None:
    """The innermost failed allocation in ``exc``'s cause chain, or None."""
    found: BaseException | None = None
    seen: BaseException | None = exc
    for _ in range(20):
        if seen is None:
            break
        name = type(seen).__name__.lower()
        reason = getattr(seen, "reason", None)  # a TableLoadError: not its file name
        text = f"{name}: {reason if isinstance(reason, str) else seen}".lower()
        if (
            isinstance(seen, MemoryError)
            or "memory" in name
            or any(marker in text for marker in _MEMORY_TEXT)
        ):
            found = seen
        seen = seen.__cause__ or seen.__context__
    return found


def is_memory_error(exc: BaseException) -> bool:
    """Whether ``exc`` or anything in its cause chain is a failed allocation."""
    return memory_cause(exc) is not None
