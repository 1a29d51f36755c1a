"""The BM25 tokenizer: memoised stems equal PyStemmer's, and the memo stays bounded."""

from __future__ import annotations

import Stemmer

from tablerag_agents.retrieval import tokenize
from tablerag_agents.retrieval.tokenize import Tokenizer

TEXT = (
    "The runners were running; a runner runs the marathons. Running records, "
    "recorded records and the Record-holders of Città di Castello ran again."
)


def _direct(text: str) -> list[str]:
    words = [w for w in tokenize._WORD.findall(text.lower()) if w not in Tokenizer()._stop]
    return Stemmer.Stemmer("english").stemWords(words)


def test_memoised_stems_equal_pystemmer() -> None:
    tok = Tokenizer()
    assert tok(TEXT) == _direct(TEXT) and "run" in tok(TEXT) and "the" not in tok(TEXT)
    assert tok(TEXT) == _direct(TEXT)  # second call: every stem from the memo
    assert tok("") == [] and Tokenizer(stem=None)("Running runs") == ["running", "runs"]


def test_the_memo_starts_over_past_its_bound(monkeypatch) -> None:
    monkeypatch.setattr(tokenize, "MAX_MEMO_WORDS", 5)
    tok = Tokenizer()
    for text in (TEXT, "alpha beta gamma delta epsilon zeta eta theta", TEXT):
        assert tok(text) == _direct(text)
        assert len(tok._stems) <= 5 + len(set(text.lower().split()))
