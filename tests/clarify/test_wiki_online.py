"""OnlineWikipedia without a network, and FallbackWikipedia's order."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
import requests
import wikipedia
from pytest_socket import SocketBlockedError

from tablerag_agents.clarify import FallbackWikipedia, OnlineWikipedia, WikiPage


def test_offline_machine_gives_none_and_empty_without_raising(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Real calls through the wikipedia package and requests; name resolution
    # fails as on a machine without a network (and no DNS query leaves the test).
    def no_dns(*args: object, **kwargs: object) -> None:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    wiki = OnlineWikipedia(retry_after_s=0.0)
    with caplog.at_level(logging.DEBUG, logger="tablerag_agents.clarify.wiki"):
        assert wiki.page_intro("Lake Tuz") is None
        assert wiki.search("lakes of turkey") == []
        assert wiki.page_intro("Turkey") is None
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "unreachable" in warnings[0].getMessage()
    assert sum(r.levelno == logging.DEBUG for r in caplog.records) == 2


@pytest.mark.filterwarnings("ignore:A test tried to use socket")
@pytest.mark.parametrize(
    "make_error",
    [
        lambda: requests.ConnectionError("no route to host"),
        lambda: requests.Timeout("read timed out"),
        lambda: SocketBlockedError(),  # pytest-socket's error is a RuntimeError
        lambda: wikipedia.exceptions.HTTPTimeoutError("q"),
        lambda: ValueError("Expecting value: line 1 column 1 (char 0)"),  # an HTML error page
    ],
    ids=["connection", "timeout", "socket-blocked", "http-timeout", "bad-json"],
)
def test_network_errors_are_caught_and_requests_pause(
    monkeypatch: pytest.MonkeyPatch, make_error: Callable[[], Exception]
) -> None:
    calls: list[str] = []

    def failing_search(query: str, results: int = 10) -> list[str]:
        calls.append(query)
        raise make_error()

    monkeypatch.setattr(wikipedia, "search", failing_search)
    wiki = OnlineWikipedia(retry_after_s=60.0)
    assert wiki.search("a") == []
    assert wiki.search("b") == []
    assert calls == ["a"]


@dataclass
class _FakePage:
    title: str
    url: str
    summary: str


def test_pages_and_titles_are_mapped(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[str, bool]] = []

    def page(title: str, auto_suggest: bool = True, redirect: bool = True) -> _FakePage:
        asked.append((title, auto_suggest))
        if title == "Nowhere":
            raise wikipedia.exceptions.PageError(title)
        if title == "Mercury":
            raise wikipedia.exceptions.DisambiguationError(title, ["Mercury (planet)"])
        return _FakePage("Lake Tuz", "https://en.wikipedia.org/wiki/Lake_Tuz", "Salt lake. " * 20)

    monkeypatch.setattr(wikipedia, "page", page)
    monkeypatch.setattr(wikipedia, "search", lambda q, results=10: ["A", "B", "C", "D"][:results])
    wiki = OnlineWikipedia(max_chars=50)
    got = wiki.page_intro("lake tuz")
    assert got == WikiPage(
        title="Lake Tuz",
        url="https://en.wikipedia.org/wiki/Lake_Tuz",
        text="Salt lake. Salt lake. Salt lake. Salt lake.",
    )
    assert asked == [("lake tuz", False)]  # no auto-suggest: the exact title only
    assert wiki.page_intro("Nowhere") is None
    assert wiki.page_intro("Mercury") is None
    assert wiki.search("x", k=2) == ["A", "B"]
    assert wikipedia.wikipedia.API_URL == "https://en.wikipedia.org/w/api.php"


@dataclass
class _Provider:
    name: str
    pages: dict[str, str] = field(default_factory=dict)
    hits: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)

    def page_intro(self, title: str) -> WikiPage | None:
        self.log.append(f"{self.name}:page:{title}")
        text = self.pages.get(title)
        return None if text is None else WikiPage(title=title, url=self.name, text=text)

    def search(self, query: str, k: int = 3) -> list[str]:
        self.log.append(f"{self.name}:search:{query}")
        return self.hits[:k]


def test_fallback_asks_providers_in_order() -> None:
    log: list[str] = []
    online = _Provider("online", {"A": "from online"}, ["A"], log)
    offline = _Provider("offline", {"A": "from offline", "B": "only offline"}, ["B", "A"], log)
    wiki = FallbackWikipedia([online, offline])
    page = wiki.page_intro("A")
    assert page is not None and page.text == "from online"
    assert log == ["online:page:A"]  # the second provider is not asked
    page = wiki.page_intro("B")
    assert page is not None and page.text == "only offline"
    assert wiki.page_intro("C") is None
    assert wiki.search("q") == ["A"]
    online.hits = []
    assert wiki.search("q", k=1) == ["B"]
    assert FallbackWikipedia([]).page_intro("A") is None
    assert FallbackWikipedia([]).search("A") == []


def test_a_hanging_request_times_out(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    release = threading.Event()

    def hanging_search(query: str, results: int = 10) -> list[str]:
        release.wait(10)
        return ["late"]

    monkeypatch.setattr(wikipedia, "search", hanging_search)
    wiki = OnlineWikipedia(timeout_s=0.2)
    started = time.perf_counter()
    with caplog.at_level(logging.WARNING, logger="tablerag_agents.clarify.wiki"):
        assert wiki.search("lakes") == []
    release.set()
    assert time.perf_counter() - started < 5
    assert "no answer within 0.2 s" in caplog.text
