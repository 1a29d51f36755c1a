"""Wikipedia background for a table (Wu, TableRAG), and the evaluation rule that hides answers.

Wu's TableRAG looks up the page for the table's caption and, when that fails, a
search built from the headers. The page is background for the solver, never
a replacement for the table; an evaluation removes the sentences that contain
a gold answer (:mod:`tablerag_agents.evaluation.wiki_redaction`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tablerag_agents.clarify.wiki import WikiPage, WikipediaProvider, truncate_text
from tablerag_agents.retrieval.tokenize import Tokenizer

# When a search hit counts: its title shares two words with the query (all of a
# one-word query) and covers this share of the query's words, or this share of
# its own words are query words ("List" aside). A caption hit may do either; a
# header query is a bag of column words, so only a title made of them counts.
_CAPTION_QUERY_COVERAGE, _CAPTION_TITLE_COVERAGE = 0.51, 1.0
_HEADER_QUERY_COVERAGE, _HEADER_TITLE_COVERAGE = float("inf"), 0.66

# Header words that say nothing about a table's topic.
_GENERIC_HEADER_WORDS = frozenset(
    "no nr num number name names notes note total totals rank ranking pos position ref refs "
    "reference references year years date dates id code type other remarks comment comments "
    "result results score details".split()
)
_WORD = re.compile(r"[^\W\d_]{2,}", re.UNICODE)
_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


def header_query(headers: Sequence[str], max_words: int = 10) -> str:
    """Build a search query from column names (Wu's TableRAG: "company revenue employees ...").

    Keeps each distinct word once, in order, without numbers and generic words
    such as "rank", "name" or "notes".
    """
    words: list[str] = []
    for header in headers:
        for word in _WORD.findall(str(header).lower()):
            if word not in _GENERIC_HEADER_WORDS and word not in words:
                words.append(word)
    return " ".join(words[:max_words])


def _relevant(query: list[str], title: list[str], query_share: float, title_share: float) -> bool:
    """Whether a hit's title words match enough of the query's words (see above)."""
    q, t = set(query), set(title) - {"list"}
    shared = len(q & t)
    if not q or not t or shared < min(2, len(q)):
        return False
    return shared / len(q) >= query_share or shared / len(t) >= title_share


def _first_page(
    provider: WikipediaProvider, query: str, shares: tuple[float, float], k: int = 3
) -> WikiPage | None:
    tokenize = Tokenizer()
    words = tokenize(query)
    for title in provider.search(query, k):
        if not _relevant(words, tokenize(title), *shares):
            continue
        page = provider.page_intro(title)
        if page is not None:
            return page
    return None


def table_summary(
    caption: str,
    headers: Sequence[str],
    provider: WikipediaProvider,
    *,
    max_chars: int = 600,
) -> WikiPage | None:
    """Return the Wikipedia page that gives background on a table, or None.

    Tries, in order: the page titled exactly like the caption, the best search
    hit for the caption, the best search hit for a query built from the
    headers. A search hit must look relevant: its title shares at least two
    words with the query and, for the caption, holds more than half of the
    caption's words or only caption words ("WRU Division One East" does not
    get "East Anglia ONE"); for the headers, two thirds of the title's words
    are header words. The text is cut to ``max_chars`` (at a sentence end when
    possible).
    """
    caption = " ".join(caption.split())
    page: WikiPage | None = None
    if caption:
        shares = (_CAPTION_QUERY_COVERAGE, _CAPTION_TITLE_COVERAGE)
        page = provider.page_intro(caption) or _first_page(provider, caption, shares)
    if page is None:
        query = header_query(headers)
        shares = (_HEADER_QUERY_COVERAGE, _HEADER_TITLE_COVERAGE)
        page = _first_page(provider, query, shares) if query else None
    if page is None:
        return None
    return page.model_copy(update={"text": truncate_text(page.text, max_chars)})


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences at ``.``, ``!`` or ``?`` before a capital or a digit."""
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]
