"""Wikipedia background without the answer, for evaluation (Wu et al.'s rule).

When the graph's Wikipedia summary is on during an evaluation, the sentences
of a page intro that contain a gold answer are dropped before the model sees
them, so a score measures reading the table, not copying the answer from
the background. The harness wraps the configured provider once
(:func:`hide_answers_in`) and names the current question's answers around each
run (:func:`hidden_answers`); the library itself never sees gold answers.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from tablerag_agents.clarify import drop_answer_sentences
from tablerag_agents.clarify.wiki import WikiPage, WikipediaProvider
from tablerag_agents.resources import Resources

_HIDDEN: ContextVar[tuple[str, ...]] = ContextVar("tablerag_hidden_answers", default=())


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
