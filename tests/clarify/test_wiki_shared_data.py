"""OfflineWikipedia on the real corpus in ../shared/data/wiki (183,778 page intros)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tablerag_agents.clarify import OfflineWikipedia, table_summary


@pytest.mark.data
def test_real_corpus_loads_fast_and_finds_known_pages(shared_data: Path, tmp_path: Path) -> None:
    path = shared_data / "wiki" / "intros.jsonl.gz"
    started = time.perf_counter()
    wiki = OfflineWikipedia(path, cache_dir=tmp_path)
    assert len(wiki) == 183_778
    first_load = time.perf_counter() - started
    page = wiki.page_intro("1975 nba playoffs")
    assert page is not None
    assert page.url == "https://en.wikipedia.org/wiki/1975_NBA_Playoffs"
    assert "Golden State Warriors" in page.text
    assert "National Basketball Association's" in page.text  # detokenized
    assert wiki.search("superbike world championship", k=1) == ["Superbike World Championship"]

    started = time.perf_counter()
    again = OfflineWikipedia(path, cache_dir=tmp_path)
    assert len(again) == 183_778
    cached_load = time.perf_counter() - started
    summary = table_summary("1990 Superbike World Championship season", [], again)
    assert summary is not None and summary.title == "Superbike World Championship"
    # Measured on 2 idle cores: about 2.6 s, then 0.35 s from the cache. Absolute bounds
    # fail on a loaded machine (61 s once beside a model run): the cache must beat the parse.
    assert cached_load < first_load / 2, (first_load, cached_load)
