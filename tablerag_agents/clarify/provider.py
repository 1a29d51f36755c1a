"""Choose the Wikipedia provider from the settings (``wikipedia`` and ``wiki_intros``)."""

from __future__ import annotations

from tablerag_agents.clarify.offline_wiki import OfflineWikipedia
from tablerag_agents.clarify.wiki import FallbackWikipedia, OnlineWikipedia, WikipediaProvider
from tablerag_agents.config import Settings
from tablerag_agents.errors import ConfigError


def get_wikipedia_provider(settings: Settings | None = None) -> WikipediaProvider:
    """Return the provider the settings ask for.

    ``"online"``: wikipedia.org; ``"offline"``: the ``wiki_intros`` corpus
    (indexed under ``cache_dir``); ``"auto"``: online, then offline when
    ``wiki_intros`` is set; ``"off"``: a provider that finds nothing.

    Raises:
        ConfigError: If ``"offline"`` is asked for without ``wiki_intros``.
        WikiCorpusError: If the ``wiki_intros`` file does not exist.
    """
    settings = settings or Settings()
    mode = settings.wikipedia
    if mode == "off":
        return FallbackWikipedia([])
    if mode == "online":
        return OnlineWikipedia()
    offline = (
        OfflineWikipedia(settings.wiki_intros, cache_dir=settings.cache_dir)
        if settings.wiki_intros is not None
        else None
    )
    if mode == "offline":
        if offline is None:
            raise ConfigError(
                "wikipedia='offline' needs a corpus of page intros: set wiki_intros "
                "(TABLERAG_WIKI_INTROS), e.g. to ../shared/data/wiki/intros.jsonl.gz"
            )
        return offline
    return FallbackWikipedia([OnlineWikipedia()] + ([offline] if offline else []))
