"""get_wikipedia_provider: the `wikipedia` and `wiki_intros` settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablerag_agents.clarify import (
    FallbackWikipedia,
    OfflineWikipedia,
    OnlineWikipedia,
    get_wikipedia_provider,
)
from tablerag_agents.config import Settings
from tablerag_agents.errors import ConfigError, WikiCorpusError


@pytest.fixture(autouse=True)
def _no_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TABLERAG_CONFIG", str(tmp_path / "absent.toml"))
    monkeypatch.setenv("TABLERAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TABLERAG_WIKIPEDIA", raising=False)
    monkeypatch.delenv("TABLERAG_WIKI_INTROS", raising=False)


def test_defaults() -> None:
    settings = Settings()
    assert settings.wikipedia == "auto" and settings.wiki_intros is None
    provider = get_wikipedia_provider(settings)
    assert isinstance(provider, FallbackWikipedia)
    assert [type(p) for p in provider.providers] == [OnlineWikipedia]


def test_env_vars_choose_an_offline_corpus(
    corpus_gz: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TABLERAG_WIKIPEDIA", "offline")
    monkeypatch.setenv("TABLERAG_WIKI_INTROS", str(corpus_gz))
    settings = Settings()
    assert settings.wiki_intros == corpus_gz
    provider = get_wikipedia_provider(settings)
    assert isinstance(provider, OfflineWikipedia)
    assert provider.cache_dir == tmp_path / "cache"
    page = provider.page_intro("Lake Tuz")
    assert page is not None and page.title == "Lake Tuz"


def test_auto_with_a_corpus_is_online_then_offline(corpus_gz: Path) -> None:
    provider = get_wikipedia_provider(Settings(wiki_intros=corpus_gz))
    assert isinstance(provider, FallbackWikipedia)
    assert [type(p) for p in provider.providers] == [OnlineWikipedia, OfflineWikipedia]


def test_online_and_off(corpus_gz: Path) -> None:
    assert isinstance(get_wikipedia_provider(Settings(wikipedia="online")), OnlineWikipedia)
    off = get_wikipedia_provider(Settings(wikipedia="off", wiki_intros=corpus_gz))
    assert off.page_intro("Lake Tuz") is None and off.search("Lake Tuz") == []


def test_offline_without_a_corpus_or_with_a_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="wiki_intros"):
        get_wikipedia_provider(Settings(wikipedia="offline"))
    with pytest.raises(WikiCorpusError, match="no such file"):
        get_wikipedia_provider(Settings(wikipedia="offline", wiki_intros=tmp_path / "x.gz"))


def test_unknown_mode_is_rejected() -> None:
    with pytest.raises(ValueError):
        Settings(wikipedia="sometimes")
