"""Settings: which chat model and embeddings to use, and where caches live.

Values come, in order of precedence, from keyword arguments, environment
variables prefixed ``TABLERAG_`` (e.g. ``TABLERAG_CHAT_MODEL``), a TOML config
file (``TABLERAG_CONFIG`` or ``./tablerag.toml``), then the defaults below.
The defaults are the embedded offline models: no API key, no network.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import Field, SecretStr
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

EMBEDDED = "embedded"


def default_cache_dir() -> Path:
    """Return the per-user cache directory (``TABLERAG_CACHE_DIR`` overrides it)."""
    return Path(platformdirs.user_cache_dir("tablerag-agents"))


def _config_file() -> Path:
    return Path(os.environ.get("TABLERAG_CONFIG", "tablerag.toml"))


class Settings(BaseSettings):
    """Model and cache configuration for tablerag-agents."""

    model_config = SettingsConfigDict(env_prefix="TABLERAG_", extra="ignore")

    chat_model: str = Field(
        default=EMBEDDED,
        description=(
            "'embedded' (local Qwen2.5-Coder-1.5B GGUF via xllamacpp), an "
            "init_chat_model string such as 'openai:gpt-4o-mini', or any model name "
            "served at `base_url` (an OpenAI-compatible endpoint)."
        ),
    )
    base_url: str | None = Field(
        default=None, description="OpenAI-compatible endpoint for `chat_model`."
    )
    api_key: SecretStr | None = Field(
        default=None, description="API key for `base_url` (falls back to OPENAI_API_KEY)."
    )
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=512, ge=1, description="Max new tokens per LLM call.")
    embeddings: str = Field(
        default=EMBEDDED,
        description=(
            "'embedded' (local all-MiniLM-L6-v2), 'openai:<model>', or a path to a "
            "local sentence-transformers folder."
        ),
    )
    cache_dir: Path = Field(default_factory=default_cache_dir)
    llm_cache: bool = Field(default=True, description="Cache LLM responses in SQLite.")
    # Embedded server knobs.
    n_ctx: int = Field(default=8192, ge=512, description="Context size of the embedded model.")
    n_parallel: int = Field(
        default=4, ge=1, description="Parallel decoding slots of the embedded server."
    )
    n_threads: int = Field(default=0, ge=0, description="CPU threads (0 = all cores).")
    # Wikipedia background for the clarify stage.
    wikipedia: Literal["auto", "online", "offline", "off"] = Field(
        default="auto",
        description=(
            "Where Wikipedia summaries come from: 'online' (the wikipedia package), "
            "'offline' (the `wiki_intros` corpus), 'auto' (online, then offline when "
            "`wiki_intros` is set) or 'off'."
        ),
    )
    wiki_intros: Path | None = Field(
        default=None,
        description="Local corpus of page intros: (gzipped) JSON Lines of {title, url, intro}.",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Read kwargs, then env vars, then the TOML file."""
        return (
            init_settings,
            env_settings,
            TomlConfigSettingsSource(settings_cls, toml_file=_config_file()),
        )

    def public_dict(self) -> dict[str, Any]:
        """Return the settings without secrets (for logs and index keys)."""
        data = self.model_dump(exclude={"api_key"})
        data["cache_dir"] = str(self.cache_dir)
        return data
