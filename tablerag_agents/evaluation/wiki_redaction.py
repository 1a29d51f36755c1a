"""Wikipedia background without the answer, for evaluation (Wu et al.'s rule).

When the graph's Wikipedia summary is on during an evaluation, the sentences
of a page intro that contain a gold answer are dropped before the model sees
them, so a score measures reading the table, not copying the answer from
the background. The harness wraps the configured provider once
(:func:`hide_answers_in`) and names the current question's answers around each
run (:func:`hidden_answers`); the library itself never sees gold answers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from tablerag_agents.clarify.summary import split_sentences
from tablerag_agents.clarify.wiki import WikiPage, WikipediaProvider
from tablerag_agents.resources import Resources
from tablerag_agents.solve.normalize import normalize_text, parse_number
from tablerag_agents.tables.values import numbers_in_text

_HIDDEN: ContextVar[tuple[str, ...]] = ContextVar("tablerag_hidden_answers", default=())


def _contains_words(haystack: str, needle: str) -> bool:
    return f" {needle} " in f" {haystack} "


def drop_answer_sentences(text: str, answers: Sequence[str]) -> str:
    """Remove the sentences of ``text`` that contain any of ``answers`` (Wu's rule).

    Text answers match whole words after normalisation (case, accents,
    punctuation and articles ignored); number answers match numbers written
    in any form (``"1,234"``, ``"1234"``, ``"1234.0"``), but not part of another
    number (``"12"`` does not match ``"12.5"`` or ``"1,234"``).
    """
    numeric: list[float] = []
    textual: list[str] = []
    for answer in answers:
        value = parse_number(str(answer))
        if value is not None and re.search(r"\d", str(answer)):
            numeric.append(value)
        elif norm := normalize_text(str(answer)):
            textual.append(norm)
    if not numeric and not textual:
        return text
    kept = []
    for sentence in split_sentences(text):
        norm = normalize_text(sentence)
        if any(_contains_words(norm, a) for a in textual):
            continue
        if numeric and numbers_in_text(sentence).intersection(numeric):
            continue
        kept.append(sentence)
    return " ".join(kept)


@contextmanager
def hidden_answers(answers: Sequence[str]) -> Iterator[None]:
    """Drop sentences containing ``answers`` from the pages read inside this block.

    The answers live in a context variable, so concurrent questions (worker
    threads, each with its own context) do not see each other's.
    """
    token = _HIDDEN.set(tuple(str(a) for a in answers))
    try:
        yield
    finally:
        _HIDDEN.reset(token)


class AnswerHidingWikipedia:
    """A :class:`WikipediaProvider` whose page texts lose the current answers' sentences."""

    def __init__(self, inner: WikipediaProvider) -> None:
        """Wrap ``inner``; searches pass through, page texts are filtered."""
        self.inner = inner

    def page_intro(self, title: str) -> WikiPage | None:
        """The inner provider's page, without the sentences that hold a hidden answer."""
        page = self.inner.page_intro(title)
        answers = _HIDDEN.get()
        if page is None or not answers:
            return page
        return page.model_copy(update={"text": drop_answer_sentences(page.text, answers)})

    def search(self, query: str, k: int = 3) -> list[str]:
        """The inner provider's search."""
        return self.inner.search(query, k)


def hide_answers_in(resources: Resources) -> None:
    """Wrap ``resources``' Wikipedia provider in :class:`AnswerHidingWikipedia` (once)."""
    if not isinstance(resources.wikipedia, AnswerHidingWikipedia):
        resources.wikipedia = AnswerHidingWikipedia(resources.wikipedia)
