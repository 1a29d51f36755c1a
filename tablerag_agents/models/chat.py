"""Chat model factory: the embedded local model by default, any provider by config."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from langchain_core.caches import BaseCache
from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr

from tablerag_agents.config import EMBEDDED, Settings
from tablerag_agents.errors import ModelError
from tablerag_agents.models.gguf import ensure_gguf
from tablerag_agents.models.server import ALIAS, ServerParams, get_server

logger = logging.getLogger(__name__)


def llm_cache(settings: Settings) -> BaseCache | None:
    """Return the SQLite response cache under ``settings.cache_dir`` (None if disabled)."""
    if not settings.llm_cache:
        return None
    from langchain_community.cache import SQLiteCache

    path = Path(settings.cache_dir) / "llm_cache.sqlite"
    path.parent.mkdir(parents=True, exist_ok=True)
    return SQLiteCache(database_path=str(path))


def _embedded_chat(settings: Settings, common: dict[str, Any]) -> BaseChatModel:
    from tablerag_agents.models.tool_calling import EmbeddedChatModel

    model_path = ensure_gguf(Path(settings.cache_dir) / "models")
    server = get_server(
        ServerParams(
            model_path=model_path,
            n_ctx_per_slot=settings.n_ctx,
            n_parallel=settings.n_parallel,
            n_threads=settings.n_threads,
        )
    )
    # Parses the tool calls this model writes as text (see models/tool_calling.py).
    return EmbeddedChatModel(
        base_url=server.base_url,
        api_key=SecretStr(server.api_key),  # the server's random per-process key
        model=ALIAS,
        stream_usage=True,
        max_retries=1,
        **common,
    )


def get_chat_model(settings: Settings | None = None) -> BaseChatModel:
    """Create the chat model chosen by ``settings.chat_model``.

    * ``embedded``: the bundled Qwen2.5-Coder-1.5B served locally (no key, no network).
    * with ``base_url`` set: that model name on any OpenAI-compatible endpoint.
    * otherwise: an ``init_chat_model`` string such as ``openai:gpt-4o-mini``.

    Responses are cached in SQLite when ``settings.llm_cache`` is on.
    """
    settings = settings or Settings()
    common: dict[str, Any] = {
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
    }
    cache = llm_cache(settings)
    if cache is not None:
        common["cache"] = cache
    spec = settings.chat_model
    if spec == EMBEDDED:
        return _embedded_chat(settings, common)
    if settings.base_url:
        from langchain_openai import ChatOpenAI

        key = settings.api_key.get_secret_value() if settings.api_key else None
        return ChatOpenAI(
            base_url=settings.base_url,
            api_key=SecretStr(key or os.environ.get("OPENAI_API_KEY") or "none"),
            model=spec,
            stream_usage=True,
            **common,
        )
    from langchain.chat_models import init_chat_model

    try:
        return init_chat_model(spec, **common)
    except (ImportError, ValueError) as exc:
        raise ModelError(f"cannot create chat model {spec!r}: {exc}") from exc
