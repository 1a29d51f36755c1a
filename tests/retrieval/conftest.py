"""Fixtures for retrieval tests: a tiny real corpus and small deterministic encoders."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from tablerag_agents.retrieval.base import Doc

_WORD = re.compile(r"\w+")


def _word_vector(word: str, dim: int) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
    vec = np.random.default_rng(seed).standard_normal(dim)
    return vec / np.linalg.norm(vec)


class BagOfWordsEmbeddings(Embeddings):
    """A real (if simple) embedding: the sum of fixed random word vectors, lowercased."""

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.name = f"bow:{dim}"

    def _embed(self, text: str) -> list[float]:
        vec = np.zeros(self.dim)
        for word in _WORD.findall(text.lower()):
            vec += _word_vector(word, self.dim)
        return vec.tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._embed(text)


def word_token_encoder(texts, dim: int = 64) -> list[np.ndarray]:
    """One unit vector per lowercased word: MaxSim then counts shared words."""
    out = []
    for text in texts:
        words = _WORD.findall(text.lower())
        out.append(np.stack([_word_vector(w, dim) for w in words]) if words else np.zeros((0, dim)))
    return out


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
    return word_token_encoder
