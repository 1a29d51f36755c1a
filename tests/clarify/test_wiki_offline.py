"""OfflineWikipedia over a tiny corpus: title lookup, BM25 title search, cache, errors."""

from __future__ import annotations

import gzip
import time
from pathlib import Path

import pytest
from wiki_pages import PAGES, write_corpus

from tablerag_agents.clarify import OfflineWikipedia, WikipediaProvider, normalize_title
from tablerag_agents.errors import WikiCorpusError


def test_title_lookup_ignores_case_underscores_and_spacing(corpus_gz: Path) -> None:
    wiki = OfflineWikipedia(corpus_gz)
    assert isinstance(wiki, WikipediaProvider)
    page = wiki.page_intro("  lake_TUZ ")
    assert page is not None
    assert page.title == "Lake Tuz"
    assert page.url == "https://en.wikipedia.org/wiki/Lake_Tuz"
    # Tokenized text ("Turkey ." / "( 643 sq mi )") is put back together.
    assert page.text == (
        "Lake Tuz is the second largest lake in Turkey. It has an area of 1,665 km2 (643 sq mi)."
    )
    assert wiki.page_intro("Lake Tuzla") is None
    assert len(wiki) == len(PAGES)


def test_titles_differing_only_in_case_prefer_the_exact_spelling(corpus_gz: Path) -> None:
    wiki = OfflineWikipedia(corpus_gz)
    lower = wiki.page_intro("1975 NBA playoffs")
    upper = wiki.page_intro("1975 NBA Playoffs")
    assert lower is not None and upper is not None
    assert lower.title == "1975 NBA playoffs" and "Rick Barry" in lower.text
    assert upper.title == "1975 NBA Playoffs" and "National Basketball Association's" in upper.text
    assert wiki.page_intro("1975 nba PLAYOFFS") is not None


def test_placeholder_and_disambiguation_intros_are_no_page(corpus_gz: Path) -> None:
    wiki = OfflineWikipedia(corpus_gz)
    assert wiki.page_intro("List of lakes of Turkey") is None  # intro "N/A"
    assert wiki.page_intro("Dave Nelson") is None  # "may refer to :"


def test_search_ranks_titles_by_bm25(corpus_gz: Path) -> None:
    wiki = OfflineWikipedia(corpus_gz)
    assert wiki.search("lakes of turkey", k=2) == ["List of lakes of Turkey", "Turkey"]
    # Titles that differ only in case come back once.
    assert wiki.search("nba playoffs 1975", k=5) == ["1975 NBA Playoffs"]
    assert wiki.search("superbike championship", k=1) == ["Superbike World Championship"]
    assert wiki.search("zeppelin", k=3) == []
    assert wiki.search("turkey", k=0) == []


def test_max_chars_cuts_at_a_sentence_end(corpus_gz: Path) -> None:
    first = (
        "The 1975 NBA playoffs concluded with the Golden State Warriors defeating the "
        "Washington Bullets."
    )
    page = OfflineWikipedia(corpus_gz, max_chars=110).page_intro("1975 NBA playoffs")
    assert page is not None and page.text == first
    # No sentence end past half-way: cut at a word boundary, marked with an ellipsis.
    page = OfflineWikipedia(corpus_gz, max_chars=30).page_intro("1975 NBA playoffs")
    assert page is not None and page.text == "The 1975 NBA playoffs…"


def test_plain_jsonl_works_too(tmp_path: Path) -> None:
    wiki = OfflineWikipedia(write_corpus(tmp_path / "intros.jsonl"))
    page = wiki.page_intro("Turkey")
    assert page is not None and page.text.startswith("Turkey is a transcontinental")


def test_cache_dir_makes_the_second_load_skip_decompression(
    corpus_gz: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    first = OfflineWikipedia(corpus_gz, cache_dir=cache)
    assert first.search("welsh rugby", k=1) == ["Welsh Rugby Union"]
    saved = {p.name for p in next((cache / "wiki").iterdir()).iterdir()}
    assert {"intros.jsonl", "titles.json", "offsets.npy", "bm25-1"} <= saved

    def no_gzip(*args: object, **kwargs: object) -> None:
        raise AssertionError("the cached corpus was decompressed again")

    monkeypatch.setattr(gzip, "open", no_gzip)
    second = OfflineWikipedia(corpus_gz, cache_dir=cache)
    page = second.page_intro("welsh rugby union")
    assert page is not None and page.text.startswith("The Welsh Rugby Union")
    assert second.search("welsh rugby", k=1) == ["Welsh Rugby Union"]


def test_a_changed_corpus_is_not_served_from_a_stale_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = write_corpus(tmp_path / "intros.jsonl.gz")
    assert OfflineWikipedia(path, cache_dir=cache).page_intro("Turkey") is not None
    time.sleep(0.01)  # a new mtime
    write_corpus(path, [p for p in PAGES if p["title"] != "Turkey"])
    assert OfflineWikipedia(path, cache_dir=cache).page_intro("Turkey") is None


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(WikiCorpusError, match="no such file"):
        OfflineWikipedia(tmp_path / "nope.jsonl.gz")


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("bad.jsonl", b'{"title": "A", "intro": "x"}\nnot json\n', "line 2 is not JSON"),
        ("bad.jsonl", b'{"title": "A"}\n', "line 1 is not an object"),
        ("bad.jsonl", b'["A", "intro"]\n', "line 1 is not an object"),
        ("empty.jsonl", b"", "empty"),
        ("blank.jsonl", b"\n\n", "no pages"),
        ("bad.jsonl.gz", b"this is not gzip", "not a readable gzip"),
    ],
)
def test_malformed_corpus_is_a_clear_error(
    tmp_path: Path, name: str, content: bytes, reason: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    wiki = OfflineWikipedia(path)
    with pytest.raises(WikiCorpusError, match=reason) as info:
        wiki.page_intro("A")
    assert info.value.path == str(path)


def test_normalize_title() -> None:
    assert normalize_title("  List_of lakes\tof  TURKEY ") == "list of lakes of turkey"
