"""Limits and switches of the sandbox, validated by pydantic."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MIB = 1024 * 1024


class SandboxPolicy(BaseModel):
    """What sandboxed code may use, and how the worker pool behaves.

    The defaults are meant for short pandas snippets written by an LLM.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    timeout_s: float = Field(
        default=10.0, gt=0, le=3600, description="Default wall-clock limit of one run."
    )
    kill_grace_s: float = Field(
        default=1.0,
        gt=0,
        le=60,
        description="Extra wall-clock time after the soft limit before the host kills the worker.",
    )
    memory_mb: int = Field(
        default=1024,
        ge=256,
        description=(
            "Address-space limit (RLIMIT_AS) per process. Loading a table needs about "
            "twice its size on top of ~300 MB for Python and pandas."
        ),
    )
    max_processes: int = Field(
        default=16, ge=2, le=4096, description="Processes and threads (RLIMIT_NPROC)."
    )
    max_file_mb: int = Field(default=16, ge=1, description="Largest file a process may write.")
    max_open_files: int = Field(default=64, ge=16, description="Open file descriptors.")
    session_cpu_s: int = Field(
        default=600, ge=1, description="Total CPU seconds of one session's process."
    )
    tmpfs_mb: int = Field(default=64, ge=1, description="Size of the private writable /tmp.")
    max_output_chars: int = Field(default=10_000, ge=100, description="Cap on captured output.")
    max_repr_chars: int = Field(default=4_000, ge=100, description="Cap on the value's repr.")
    max_result_mb: int = Field(
        default=16, ge=1, le=1024, description="Largest value (Arrow/JSON) sent back."
    )
    max_table_mb: int = Field(
        default=1024, ge=1, description="Largest total size of the tables sent in."
    )
    max_workers: int = Field(default=2, ge=1, le=64, description="Concurrent sandboxes.")
    max_runs_per_worker: int = Field(
        default=500, ge=1, description="Runs after which a worker is replaced by a fresh one."
    )
    prewarm: bool = Field(
        default=True, description="Start a worker at once and keep a warm spare after recycling."
    )
    startup_timeout_s: float = Field(
        default=60.0, gt=0, description="How long a new worker may take to import pandas."
    )
    acquire_timeout_s: float = Field(
        default=120.0, gt=0, description="How long to wait for a free worker."
    )
    uid: int | None = Field(
        default=None,
        ge=1,
        description=(
            "User id the code runs as when the host runs as root. None picks a fresh "
            "unused id per worker (1_900_000_000 + random), so process limits are not "
            "shared between sandboxes; 65534 (nobody) is the classic choice."
        ),
    )
    seccomp: bool = Field(
        default=True,
        description=(
            "Deny dangerous syscalls (ptrace, namespaces, mount, keyrings, SysV IPC, bpf...). "
            "Without it (or on an unsupported CPU), workers serve one session only."
        ),
    )
    bwrap_path: str | None = Field(
        default=None, description="Path of the bubblewrap binary (None: search PATH)."
    )
    preload: tuple[str, ...] = Field(
        default=(), description="Extra modules the warm worker imports before serving."
    )
    extra_ro_paths: tuple[str, ...] = Field(
        default=(), description="Extra host paths bound read-only at the same place."
    )

    @property
    def memory_bytes(self) -> int:
        """Address-space limit in bytes."""
        return self.memory_mb * MIB

    @property
    def max_result_bytes(self) -> int:
        """Result cap in bytes."""
        return self.max_result_mb * MIB
