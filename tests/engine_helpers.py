"""Helpers of the vector-engine tests: a counting embedding and local engine configs.

A plain module (imported as ``engine_helpers``), not a conftest: ``from conftest
import ...`` picks whichever conftest was imported first when several folders run.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest
from fakes import BagOfWordsEmbeddings

from tablerag_agents.retrieval.engines import EngineConfig


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
