"""The limits one task in a bounded worker runs under."""

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
