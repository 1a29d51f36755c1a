"""The embedded llama.cpp server (xllamacpp), started lazily once per process.

The server listens on 127.0.0.1 at a free port and speaks the OpenAI API, so
the rest of the library uses it through ``ChatOpenAI`` like any hosted model.
Every local user can reach 127.0.0.1, so each server gets a random API key that
only this process knows (never logged); requests without it get 401.
It is configured for speed on a small CPU: several parallel slots (so
self-consistency samples decode together), a unified KV cache and prompt
caching (so a ReAct step only pays for its new tokens).
"""

from __future__ import annotations

import atexit
import logging
import os
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tablerag_agents.errors import ModelError

logger = logging.getLogger(__name__)

ALIAS = "qwen2.5-coder-1.5b-instruct"


@dataclass(frozen=True)
class ServerParams:
    """Launch parameters; equal params share one server per process."""

    model_path: Path
    n_ctx_per_slot: int = 8192
    n_parallel: int = 4
    n_threads: int = 0

    @property
    def threads(self) -> int:
        """Threads to use (0 means every available core)."""
        return self.n_threads or len(os.sched_getaffinity(0))


def new_api_key() -> str:
    """Return a fresh random API key (256 bits, URL-safe text)."""
    return secrets.token_urlsafe(32)


def _import_xllamacpp() -> Any:
    try:
        import xllamacpp
    except ImportError as exc:
        raise ModelError(
            "the embedded chat model needs xllamacpp; install the 'local' extra: "
            "pip install -c constraints.txt 'tablerag-agents[local]'"
        ) from exc
    return xllamacpp


def common_params(params: ServerParams, api_key: str) -> Any:
    """Build the ``xllamacpp.CommonParams`` for ``params``, accepting only ``api_key``."""
    if not api_key:
        raise ValueError("the embedded server needs a non-empty API key")
    p = _import_xllamacpp().CommonParams()
    p.model.path = str(params.model_path)
    p.n_parallel = params.n_parallel
    p.n_ctx = params.n_ctx_per_slot * params.n_parallel
    p.kv_unified = True  # slots share one KV cache, so a long prompt can use it all
    p.cont_batching = True
    p.cache_prompt = True
    p.cpuparams.n_threads = params.threads
    p.cpuparams_batch.n_threads = params.threads
    p.hostnames = ["127.0.0.1"]
    p.port = 0
    p.api_keys = [api_key]  # other local users can reach 127.0.0.1 too
    p.model_alias = {ALIAS}
    p.verbosity = 0
    p.warmup = False
    return p


class EmbeddedServer:
    """A running xllamacpp server; dropping it (``stop``) shuts it down.

    ``api_key`` is its random key: clients send it as ``Authorization: Bearer``.
    """

    def __init__(self, params: ServerParams) -> None:
        """Load the model and start listening (takes a few seconds)."""
        xllamacpp = _import_xllamacpp()
        self.api_key = new_api_key()
        p = common_params(params, self.api_key)
        started = time.perf_counter()
        self._server: Any = xllamacpp.Server(p)
        self.load_seconds = time.perf_counter() - started
        self.address: str = self._server.listening_address
        self.params = params
        logger.info("embedded model loaded in %.1fs at %s", self.load_seconds, self.address)

    @property
    def base_url(self) -> str:
        """OpenAI-compatible base URL (``.../v1``)."""
        return self.address.rstrip("/") + "/v1"

    def stop(self) -> None:
        """Shut the server down (xllamacpp stops when its object is released)."""
        self._server = None


_LOCK = threading.Lock()
# One server per process and parameter set: loading the model costs seconds and
# ~2 GB of RAM, and sharing it is what lets prompt caching work across calls.
_SERVERS: dict[ServerParams, EmbeddedServer] = {}


def get_server(params: ServerParams) -> EmbeddedServer:
    """Return the process-wide server for ``params``, starting it on first use."""
    with _LOCK:
        server = _SERVERS.get(params)
        if server is None:
            server = EmbeddedServer(params)
            _SERVERS[params] = server
        return server


def shutdown_servers() -> None:
    """Stop every embedded server of this process (also runs at exit)."""
    with _LOCK:
        for server in _SERVERS.values():
            server.stop()
        _SERVERS.clear()


atexit.register(shutdown_servers)
