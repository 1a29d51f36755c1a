"""RAGatouille backend: clear errors without the extra, and the adapter's result mapping.

End-to-end runs need the `[colbert]` extra in a separate venv and a real
checkpoint; here the adapter is checked against a stand-in with RAGatouille's
documented result shapes.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from tablerag_agents.errors import ModelError
from tablerag_agents.retrieval.base import Doc, Hit
from tablerag_agents.retrieval.ragatouille import (
    RAGatouilleReranker,
    RAGatouilleRetriever,
    load_ragatouille_model,
)


def test_missing_checkpoint_folder(tmp_path: Path):
    with pytest.raises(ModelError, match="checkpoint folder not found"):
        load_ragatouille_model(tmp_path / "nope")


@pytest.mark.skipif(importlib.util.find_spec("ragatouille") is not None, reason="installed")
def test_missing_package_gives_install_hint(tmp_path: Path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ragatouille", None)
    with pytest.raises(ModelError, match=r"\[colbert\]"):
        load_ragatouille_model(tmp_path)


class _WordOverlapColBERT:
    """Stand-in with RAGPretrainedModel's call signatures and result dicts."""

    def __init__(self):
        self.collection: list[tuple[str, str, dict]] = []
        self.calls: list[str] = []

    def _score(self, query, text):
        return float(len(set(query.lower().split()) & set(text.lower().split())))

    def index(self, collection, document_ids, document_metadatas, index_name, **kw):
        assert kw["split_documents"] is False
        self.calls.append("index")
        self.collection = list(zip(document_ids, collection, document_metadatas, strict=True))

    def add_to_index(self, new_collection, new_document_ids, new_document_metadatas, **kw):
        self.calls.append("add_to_index")
        self.collection += list(
            zip(new_document_ids, new_collection, new_document_metadatas, strict=True)
        )

    def search(self, query, index_name, k):
        ranked = sorted(self.collection, key=lambda d: -self._score(query, d[1]))[:k]
        return [
            {
                "content": t,
                "score": self._score(query, t),
                "rank": r + 1,
                "document_id": i,
                "document_metadata": m,
            }
            for r, (i, t, m) in enumerate(ranked)
        ]

    def rerank(self, query, documents, k):
        order = sorted(range(len(documents)), key=lambda i: -self._score(query, documents[i]))
        return [
            {
                "content": documents[i],
                "score": self._score(query, documents[i]),
                "rank": r + 1,
                "result_index": i,
            }
            for r, i in enumerate(order[:k])
        ]


def test_retriever_maps_ids_scores_and_metadata(corpus):
    model = _WordOverlapColBERT()
    retriever = RAGatouilleRetriever(model=model)
    assert retriever.search("anything") == []
    retriever.add(corpus[:3])
    retriever.add(corpus[3:])
    assert model.calls == ["index", "add_to_index"]
    assert len(retriever) == 5
    hits = retriever.search("the capital of germany", k=2)
    assert hits[0] == Hit("berlin", 4.0, corpus[1].text, {"lang": "de"})
    assert retriever.score("capital of france", ["volcano", "paris"]) == [1.0, 3.0]
    with pytest.raises(ValueError, match="duplicate"):
        retriever.add([Doc("paris", "again")])


def test_reranker_reorders():
    hits = [Hit("a", 1.0, "volcano island"), Hit("b", 0.5, "capital city of france")]
    out = RAGatouilleReranker(model=_WordOverlapColBERT()).rerank("capital of france", hits)
    assert [h.id for h in out] == ["b", "a"]
    assert out[0].score == 3.0
