"""Hostile saved FAISS indexes, and loading one in a child process under an address-space cap.

Shared by ``test_faiss_index_untrusted.py`` and ``bench/hostile_index.py``.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pandas as pd

_HEADER = struct.Struct("<4siqqqBi")  # fourcc, d, ntotal, unused, unused, is_trained, metric


def claimed_index_bytes(ntotal: int, dim: int = 1, payload: int = 16) -> bytes:
    """An ``IndexIDMap2(IndexFlatIP)`` file whose headers claim ``ntotal`` vectors but hold
    only ``payload`` bytes of data (FAISS sizes its buffers from the headers)."""
    head = b"".join(
        _HEADER.pack(fourcc, dim, ntotal, 1 << 20, 1 << 20, 1, 0) for fourcc in (b"IxM2", b"IxFI")
    )
    return head + struct.pack("<Q", ntotal * dim) + b"\0" * payload


def hostile_store(folder: Path, ntotal: int, dim: int = 1) -> Path:
    """A saved vector store folder: a one-document docstore and a lying ``faiss.index``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "faiss.index").write_bytes(claimed_index_bytes(ntotal, dim))
    docs = {"label": [0], "id": ["a"], "text": ["alpha"], "metadata": [json.dumps({})]}
    pd.DataFrame(docs).to_parquet(folder / "docstore.parquet", index=False)
    return folder


_CHILD = textwrap.dedent(
    """
    import json, re, resource, sys, time
    from pathlib import Path
    import faiss
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from tablerag_agents.retrieval.vectorstore import FaissVectorStore

    folder, how, cap_mb = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    if cap_mb:
        status = open("/proc/self/status").read()
        vm = int(re.search(r"VmSize:\\s+(\\d+)", status).group(1)) * 1024
        resource.setrlimit(resource.RLIMIT_AS, (vm + cap_mb * 2**20,) * 2)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    try:
        if how == "faiss":
            faiss.read_index(str(folder / "faiss.index"))
        else:
            FaissVectorStore.load(folder, DeterministicFakeEmbedding(size=1))
        outcome, message = "loaded", ""
    except BaseException as exc:
        outcome, message = type(exc).__name__, str(exc)[:300]
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"outcome": outcome, "message": message, "seconds": seconds,
                      "extra_peak_rss_mb": (peak - before) / 1024, "peak_rss_mb": peak / 1024}))
    """
)


def load_in_child(folder: Path, how: str = "library", cap_mb: int = 512) -> dict[str, Any]:
    """Load the store at ``folder`` in a fresh Python, its address space capped at
    ``cap_mb`` MB above what the imports use (0: no cap).

    ``how`` is ``library`` (``FaissVectorStore.load``) or ``faiss`` (a bare
    ``faiss.read_index``, what the library called before it checked headers).
    Returns the child's report: ``outcome`` (``loaded`` or the exception's
    type), ``message``, ``seconds`` and the extra peak RSS of the load in MB.
    """
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(folder), how, str(cap_mb)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {"outcome": f"crashed (exit {done.returncode})", "message": done.stderr[-300:]}
    return dict(json.loads(lines[-1]))
