"""Settings, weights and result type of the table-corpus index."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

#: Version of the on-disk layout; bump when it changes.
FORMAT_VERSION = 1

SearchMethod = Literal["hybrid", "bm25", "bm25_fields", "dense", "rows", "colbert", "rrf"]
SEARCH_METHODS: tuple[str, ...] = (
    "hybrid",
    "bm25",
    "bm25_fields",
    "dense",
    "rows",
    "colbert",
    "rrf",
)


@dataclass(frozen=True)
class CorpusConfig:
    """Index-time settings; they key the index (``manifest.json``).

    Attributes:
        fields: BM25 fields to index: ``meta`` (title, section title, column
            names), ``cells``, ``intro`` (page intro), ``passages`` (texts of
            the pages the cells link to).
        stem: Snowball language for BM25 stemming, or None.
        stopwords: Drop English stopwords for BM25.
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.
        dense: Dense (embedding) index of the ``meta`` text.
        rows: Dense index of row documents (title + section + ``header: value``
            pairs of one row); a table scores as its best row.
        colbert: Late-interaction (MaxSim) token index of the ``meta`` text;
            None means "if the embeddings expose token vectors".
        max_row_chars: Row documents are cut to this many characters.
    """

    fields: tuple[str, ...] = ("meta", "cells", "intro", "passages")
    stem: str | None = "english"
    stopwords: bool = True
    k1: float = 1.5
    b: float = 0.75
    dense: bool = True
    rows: bool = False
    colbert: bool | None = None
    max_row_chars: int = 512

    def params(self) -> dict[str, Any]:
        """Return the settings as JSON-ready values (for the manifest)."""
        data = asdict(self)
        data["fields"] = list(self.fields)
        return data


@dataclass(frozen=True)
class HybridWeights:
    """Weights of the score-fusion ``hybrid`` search (each channel max-normalised).

    A weight of 0 turns a channel off for the search; channels that were not
    indexed are skipped. The defaults were tuned on one half of the OTT-QA dev
    questions (``bench/retrieval_ottqa.py``) and checked on the other half.
    """

    meta: float = 1.0
    cells: float = 0.7
    intro: float = 0.1
    passages: float = 1.5
    dense: float = 0.7  # the tuned value behind the README figures (retrieval_ottqa.json)
    rows: float = 0.0
    colbert: float = 3.0
    candidates: int = 30
    """Each generating channel's top-N forms the candidate union that every channel scores.
    On OTT-QA half A (8,891 tables) 20, 30, 40 and 50 give the same HITS@1/5/10; 30 keeps
    a margin for larger corpora at ~2/5 less MaxSim work than 50 (``bench/retrieval_ottqa.py
    --candidates``, ``bench/scale_corpus.py --candidates``)."""
    extra: dict[str, float] = field(default_factory=dict)

    def channel_weights(self) -> dict[str, float]:
        """Return ``{channel: weight}`` for every channel."""
        return {
            "meta": self.meta,
            "cells": self.cells,
            "intro": self.intro,
            "passages": self.passages,
            "dense": self.dense,
            "rows": self.rows,
            "colbert": self.colbert,
            **self.extra,
        }


@dataclass(frozen=True)
class TableHit:
    """One retrieved table.

    Attributes:
        table_id: Id of the table in the corpus.
        score: Fused score (higher is better; comparable within one search).
        caption: The table's caption (page title for OTT-QA).
        text: Short description (title, section, columns) used for re-ranking.
        metadata: Extra values such as ``section_title``.
    """

    table_id: str
    score: float
    caption: str = ""
    text: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
