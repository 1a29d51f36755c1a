"""Wikipedia page intros for table background: the provider protocol, online and fallback.

A provider answers two questions: the intro of the page with a given title,
and the titles that best match a query. :class:`OnlineWikipedia` asks
wikipedia.org through the ``wikipedia`` package and never raises on network
trouble; :class:`~tablerag_agents.clarify.offline_wiki.OfflineWikipedia` reads a
local corpus; :class:`FallbackWikipedia` asks several in order.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

import requests
import wikipedia
from pydantic import BaseModel

logger = logging.getLogger(__name__)
T = TypeVar("T")

_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s)")
# Text tokenized with spaces around punctuation (OTT-QA intros): "season . The ( NBA )".
_SPACE_BEFORE = re.compile(r" +([.,;:!?%)\]}]|'s\b|n't\b|'re\b|'ve\b|'ll\b|'d\b|'m\b)")
_SPACE_AFTER = re.compile(r"([(\[{$£€]) +")


class WikiPage(BaseModel):
    """The intro of one Wikipedia page."""

    title: str
    url: str
    text: str


@runtime_checkable
class WikipediaProvider(Protocol):
    """Where page intros come from (online, a local corpus, or several in order)."""

    def page_intro(self, title: str) -> WikiPage | None:
        """Return the intro of the page named ``title``, or None if there is none."""
        ...

    def search(self, query: str, k: int = 3) -> list[str]:
        """Return up to ``k`` page titles matching ``query``, best first."""
        ...


def detokenize(text: str) -> str:
    """Undo the spaces a tokenizer put around punctuation (``"season . The ( NBA )"``)."""
    text = _SPACE_BEFORE.sub(r"\1", text)
    return _SPACE_AFTER.sub(r"\1", text).strip()


def truncate_text(text: str, max_chars: int) -> str:
    """Cut ``text`` to at most ``max_chars``, at a sentence end when one is past half-way.

    Otherwise it is cut at a word boundary and ends with an ellipsis.
    """
    text = " ".join(text.split())
    if len(text) <= max_chars:
        return text
    ends = [m.end() for m in _SENTENCE_END.finditer(text[: max_chars + 1])]
    if ends and ends[-1] >= max_chars // 2:
        return text[: ends[-1]]
    cut = text[: max(max_chars - 1, 0)]
    if " " in cut:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:") + "…"


# Failures of the request itself; pytest-socket's SocketBlockedError is a RuntimeError.
_NETWORK_ERRORS = (requests.RequestException, OSError, RuntimeError, ValueError, KeyError)


def _with_timeout(fn: Callable[[], T], timeout_s: float) -> T:
    """Run ``fn`` in a daemon thread; raise its error, or TimeoutError after ``timeout_s``."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # handed to the caller below
            box["error"] = e

    thread = threading.Thread(target=run, name="wikipedia-request", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        raise TimeoutError(f"no answer within {timeout_s:g} s")
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value


class OnlineWikipedia:
    """Page intros from wikipedia.org via the ``wikipedia`` package.

    Network failures never raise: the call returns None or ``[]``, the first
    failure is logged as a warning (later ones at debug level) and further
    calls are skipped for ``retry_after_s`` seconds, so an offline machine
    does not pay for a failing request on every call. The ``wikipedia``
    package sends requests without a timeout, so each look-up runs in a
    daemon thread and counts as failed after ``timeout_s``. The package keeps
    its language in a module global, which is set before each request.
    """

    def __init__(
        self,
        lang: str = "en",
        max_chars: int = 1000,
        *,
        timeout_s: float = 10.0,
        retry_after_s: float = 300.0,
    ) -> None:
        """Use the ``lang`` Wikipedia and cut intros to ``max_chars`` characters."""
        self.lang = lang
        self.max_chars = max_chars
        self.timeout_s = timeout_s
        self.retry_after_s = retry_after_s
        self._down_until = 0.0
        self._warned = False

    def _use_lang(self) -> None:
        url = f"https://{self.lang.lower()}.wikipedia.org/w/api.php"
        if wikipedia.wikipedia.API_URL != url:
            wikipedia.set_lang(self.lang)  # also clears the package's memo caches
            wikipedia.wikipedia.API_URL = url  # the package defaults to plain http

    def _available(self) -> bool:
        return time.monotonic() >= self._down_until

    def _failed(self, what: str, error: Exception) -> None:
        self._down_until = time.monotonic() + self.retry_after_s
        if not self._warned:
            self._warned = True
            logger.warning(
                "Wikipedia is unreachable (%s: %s); online look-ups return nothing for %.0f s",
                what,
                error,
                self.retry_after_s,
            )
        else:
            logger.debug("Wikipedia %s failed: %s", what, error)

    def page_intro(self, title: str) -> WikiPage | None:
        """Return the intro of the page ``title`` (no auto-suggest), or None."""
        if not title.strip() or not self._available():
            return None

        def fetch() -> tuple[str, str, str]:
            self._use_lang()
            page = wikipedia.page(title, auto_suggest=False, redirect=True)
            return page.summary, page.url, page.title

        try:
            text, url, found = _with_timeout(fetch, self.timeout_s)
        except (wikipedia.exceptions.PageError, wikipedia.exceptions.DisambiguationError):
            return None
        except (wikipedia.exceptions.WikipediaException, *_NETWORK_ERRORS) as e:
            self._failed(f"page {title!r}", e)
            return None
        if not text or not text.strip():
            return None
        return WikiPage(title=found, url=url, text=truncate_text(text, self.max_chars))

    def search(self, query: str, k: int = 3) -> list[str]:
        """Return up to ``k`` titles from Wikipedia's search, or ``[]``."""
        if not query.strip() or k <= 0 or not self._available():
            return []

        def fetch() -> list[str]:
            self._use_lang()
            return list(wikipedia.search(query, results=k))

        try:
            titles = _with_timeout(fetch, self.timeout_s)
        except (wikipedia.exceptions.WikipediaException, *_NETWORK_ERRORS) as e:
            self._failed(f"search {query!r}", e)
            return []
        return [str(t) for t in titles][:k]


class FallbackWikipedia:
    """Ask providers in order; the first that answers wins (e.g. online, then offline).

    With no providers it finds nothing (Wikipedia switched off).
    """

    def __init__(self, providers: Sequence[WikipediaProvider]) -> None:
        """Use ``providers`` in the given order."""
        self.providers = list(providers)

    def page_intro(self, title: str) -> WikiPage | None:
        """Return the first provider's page for ``title``, or None."""
        for provider in self.providers:
            page = provider.page_intro(title)
            if page is not None:
                return page
        return None

    def search(self, query: str, k: int = 3) -> list[str]:
        """Return the titles of the first provider that finds any."""
        for provider in self.providers:
            titles = provider.search(query, k)
            if titles:
                return titles
        return []
