"""A small word tokenizer for lexical retrieval (lowercase, unicode words, stopwords, stems)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

logger = logging.getLogger(__name__)

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_MEMO_WORDS = 250_000
"""Words whose stems a tokenizer remembers (~40 MB)."""


def _english_stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def _load_stemmer(language: str) -> Callable[[list[str]], list[str]] | None:
    """Return a Snowball word-list stemmer, or None when PyStemmer is not installed."""
    try:
        import Stemmer  # PyStemmer: Snowball stemmers, offline
    except ImportError:
        logger.warning("PyStemmer is not installed; BM25 runs without stemming")
        return None
    stemmer = Stemmer.Stemmer(language)
    return stemmer.stemWords  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Tokenizer:
    """Lowercase, split on unicode word characters, drop stopwords, stem.

    Attributes:
        stopwords: Drop English stopwords (bm25s' list).
        stem: Snowball stemmer language (e.g. ``"english"``) or None for no stemming.
            Falls back to no stemming, with a warning, when PyStemmer is missing;
            ``params()`` then records ``stem=None`` so indexes stay honest.
    """

    stopwords: bool = True
    stem: str | None = "english"

    def __post_init__(self) -> None:
        """Resolve the stopword list and the stemmer once."""
        stop = _english_stopwords() if self.stopwords else frozenset()
        stemmer = _load_stemmer(self.stem) if self.stem else None
        object.__setattr__(self, "_stop", stop)
        object.__setattr__(self, "_stemmer", stemmer)
        object.__setattr__(self, "_stems", {})

    def __call__(self, text: str) -> list[str]:
        """Return the tokens of ``text``.

        Stems are memoised per word (up to :data:`MAX_MEMO_WORDS` words, then
        the memo starts over): PyStemmer took ~2.7 ms per OTT-QA table's linked
        pages, a dictionary lookup per word ~0.6 ms.
        """
        words = [w for w in _WORD.findall(text.lower()) if w not in self._stop]  # type: ignore[attr-defined]
        stemmer = self._stemmer  # type: ignore[attr-defined]
        if stemmer is None:
            return words
        stems: dict[str, str] = self._stems  # type: ignore[attr-defined]
        if len(stems) > MAX_MEMO_WORDS:
            stems = {}  # a new dict: another thread may be reading the old one
            object.__setattr__(self, "_stems", stems)
        new = [w for w in set(words) if w not in stems]
        if new:
            stems.update(zip(new, stemmer(new), strict=True))
        return list(map(stems.__getitem__, words))

    def params(self) -> dict[str, Any]:
        """Return the effective settings (for index manifests)."""
        effective_stem = self.stem if self._stemmer is not None else None  # type: ignore[attr-defined]
        return {"stopwords": self.stopwords, "stem": effective_stem}
