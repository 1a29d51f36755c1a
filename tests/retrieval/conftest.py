"""Fixtures for retrieval tests: a tiny real corpus and small deterministic encoders."""

from __future__ import annotations

import pytest
from fakes import BagOfWordsEmbeddings, word_vector_encoder

from tablerag_agents.retrieval.base import Doc

CORPUS = [
    Doc("paris", "Paris is the capital and largest city of France", {"lang": "fr"}),
    Doc("berlin", "Berlin is the capital of Germany on the river Spree", {"lang": "de"}),
    Doc("marathon", "Marathon world records for men and women runners", {"lang": "en"}),
    Doc("volcano", "Mount Etna is an active volcano on the island of Sicily", {"lang": "it"}),
    Doc("piano", "The piano is a keyboard instrument with hammers and strings", {"lang": "en"}),
]


@pytest.fixture
def corpus() -> list[Doc]:
    """Five short docs on distinct topics."""
    return list(CORPUS)


@pytest.fixture
def bow() -> BagOfWordsEmbeddings:
    """The bag-of-words embedding."""
    return BagOfWordsEmbeddings()


@pytest.fixture
def token_encoder():
    """The per-word token encoder."""
    return word_vector_encoder
