"""Fixtures for retrieval tests: a tiny real corpus and small deterministic encoders."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest
from fakes import BagOfWordsEmbeddings, word_vector_encoder

from tablerag_agents.retrieval.base import Doc
from tablerag_agents.retrieval.engines import EngineConfig

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


class CountingEmbeddings(BagOfWordsEmbeddings):
    """The bag-of-words embedding, counting the texts it embeds (documents and queries)."""

    def __init__(self, dim: int = 64) -> None:
        """Embed in ``dim`` dimensions; counts start at zero."""
        super().__init__(dim)
        self.documents = 0
        self.queries = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed and count."""
        self.documents += len(texts)
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        """Embed and count."""
        self.queries += 1
        return super().embed_query(text)


def engine_or_skip(backend: str, tmp_path: Path) -> EngineConfig:
    """An engine config on local storage under ``tmp_path`` for ``backend``.

    Without the backend's extra installed the test is skipped, except in CI
    (``CI=true``), where the extras are part of the dev install and a missing
    one is an error.
    """
    modules = {"qdrant": "langchain_qdrant", "milvus": "langchain_milvus"}
    if backend in modules:
        try:
            importlib.import_module(modules[backend])
            if backend == "milvus":
                importlib.import_module("milvus_lite")
        except ImportError as exc:
            if os.environ.get("CI", "").lower() == "true":
                raise
            pytest.skip(f"the {backend} backend needs the [{backend}] extra: {exc}")
    if backend == "qdrant":
        return EngineConfig("qdrant", str(tmp_path / "qdrant"), "t")
    if backend == "milvus":
        return EngineConfig("milvus", str(tmp_path / "vectors.db"), "t")
    return EngineConfig()
