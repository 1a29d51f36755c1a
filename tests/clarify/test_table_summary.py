"""table_summary (caption, then headers) (seed 003)."""

from __future__ import annotations

from pathlib import Path

from tablerag_agents.clarify import (
    FallbackWikipedia,
    OfflineWikipedia,
    WikiPage,
    header_query,
    split_sentences,
    table_summary,
)


class _Recording:
    """Wrap a provider and record the calls made to it."""

    def __init__(self, inner: OfflineWikipedia) -> None:
        self.inner = inner
        self.calls: list[str] = []

    def page_intro(self, title: str) -> WikiPage | None:
        self.calls.append(f"page:{title}")
        return self.inner.page_intro(title)

    def search(self, query: str, k: int = 3) -> list[str]:
        self.calls.append(f"search:{query}")
        return self.inner.search(query, k)


def test_caption_exact_title_hit(corpus_gz: Path) -> None:
    wiki = _Recording(OfflineWikipedia(corpus_gz))
    page = table_summary("lake tuz", ["Name", "Area"], wiki)
    assert page is not None and page.title == "Lake Tuz"
    assert wiki.calls == ["page:lake tuz"]


def test_caption_miss_falls_back_to_the_best_search_hit(corpus_gz: Path) -> None:
    wiki = _Recording(OfflineWikipedia(corpus_gz))
    page = table_summary("1990 Superbike World Championship season", [], wiki)
    assert page is not None and page.title == "Superbike World Championship"
    assert wiki.calls[:2] == [
        "page:1990 Superbike World Championship season",
        "search:1990 Superbike World Championship season",
    ]


def test_irrelevant_caption_hits_fall_back_to_the_headers(corpus_gz: Path) -> None:
    # "East Anglia ONE" matches two caption words out of four: not enough.
    wiki = _Recording(OfflineWikipedia(corpus_gz))
    page = table_summary(
        "WRU Division One East", ["Club", "Played", "Try bonus", "Losing bonus", "Points"], wiki
    )
    assert page is not None and page.title == "Bonus points system"
    assert "search:club played try bonus losing points" in wiki.calls
    assert "page:East Anglia ONE" not in wiki.calls


def test_placeholder_page_is_skipped_for_the_next_hit(corpus_gz: Path) -> None:
    wiki = _Recording(OfflineWikipedia(corpus_gz))
    page = table_summary("List of the lakes in Turkey: Tuz", [], wiki)
    assert page is not None and page.title == "Lake Tuz"
    # The best hit has no intro ("N/A") and is passed over.
    assert wiki.calls.index("page:List of lakes of Turkey") < wiki.calls.index("page:Lake Tuz")
    # "Turkey" shares one word of "Lakes of Turkey": not enough, and no header helps.
    assert table_summary("Lakes of Turkey", ["Rank", "Name"], wiki) is None


def test_nothing_found_is_none(corpus_gz: Path) -> None:
    wiki = OfflineWikipedia(corpus_gz)
    # "Time FM (TV series)" shares "time" and "tv" with the headers: half its words, too few.
    headers = ["Date", "Time", "Opponent#", "Site", "TV", "Result", "Attendance"]
    assert wiki.search(header_query(headers), k=1) == ["Time FM (TV series)"]
    assert table_summary("", headers, wiki) is None
    assert table_summary("Zeppelin flights", ["Airship", "Crew"], wiki) is None
    assert table_summary("", [], wiki) is None
    assert table_summary("Anything", ["Rank", "Notes"], FallbackWikipedia([])) is None


def test_summary_text_is_cut_to_max_chars(corpus_gz: Path) -> None:
    page = table_summary("1975 NBA playoffs", [], OfflineWikipedia(corpus_gz), max_chars=100)
    assert page is not None
    assert page.text == (
        "The 1975 NBA playoffs concluded with the Golden State Warriors defeating the "
        "Washington Bullets."
    )


def test_header_query_keeps_topic_words_once() -> None:
    headers = ["Company Name", "Revenue (Million USD)", "No. of Employees", "Rank", "2019"]
    assert header_query(headers) == "company revenue million usd of employees"
    assert header_query(["#", "Notes", "Year"]) == ""


def test_split_sentences() -> None:
    text = 'He won in 1975. "Next" came. Is it 2.5? Yes! the end'
    assert split_sentences(text) == [
        "He won in 1975.",
        '"Next" came.',
        "Is it 2.5?",
        "Yes! the end",
    ]
