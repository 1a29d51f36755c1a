"""RAGatouille (real ColBERT) backend behind the same ``Retriever`` interface.

Optional: needs the ``[colbert]`` extra (``ragatouille==0.0.9.post2`` with
``transformers<5``, ``sentence-transformers<6``, ``datasets<5``, ``psutil``),
which cannot share a venv with the default stack (transformers 5), and a
*local* ColBERT checkpoint folder (one holding ``artifact.metadata``). Without
them, use the offline MaxSim scorer in :mod:`tablerag_agents.retrieval.colbert`.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tablerag_agents.errors import ModelError
from tablerag_agents.retrieval.base import Doc, Hit, Reranker, Retriever

logger = logging.getLogger(__name__)

_INSTALL_HINT = (
    "the RAGatouille backend needs the 'colbert' extra in its own venv "
    "(it requires transformers<5): pip install 'tablerag-agents[colbert]'"
)


def _install_langchain_shim() -> None:
    """Let ``langchain.retrievers`` (imported by RAGatouille 0.0.9) resolve to langchain_classic.

    LangChain 1.x moved those modules to ``langchain_classic``; only missing
    names are aliased, nothing that already imports is replaced.
    """
    for old, new in (
        ("langchain.retrievers", "langchain_classic.retrievers"),
        (
            "langchain.retrievers.document_compressors",
            "langchain_classic.retrievers.document_compressors",
        ),
        (
            "langchain.retrievers.document_compressors.base",
            "langchain_classic.retrievers.document_compressors.base",
        ),
    ):
        if old in sys.modules:
            continue
        try:
            importlib.import_module(old)
        except ImportError:
            try:
                sys.modules[old] = importlib.import_module(new)
            except ImportError:
                return


def load_ragatouille_model(checkpoint: str | Path, *, index_root: str | Path | None = None) -> Any:
    """Load ``RAGPretrainedModel`` from a local checkpoint folder.

    Raises:
        ModelError: If RAGatouille is not installed or the folder is missing.
    """
    path = Path(checkpoint)
    if not path.is_dir():
        raise ModelError(f"ColBERT checkpoint folder not found: {path} (no hub downloads)")
    _install_langchain_shim()
    try:
        from ragatouille import RAGPretrainedModel
    except ImportError as exc:
        raise ModelError(f"{_INSTALL_HINT} ({exc})") from exc
    root = str(index_root) if index_root is not None else None
    return RAGPretrainedModel.from_pretrained(str(path), index_root=root, verbose=0)


class RAGatouilleRetriever(Retriever):
    """ColBERT (PLAID index) retrieval through RAGatouille.

    Docs are indexed whole (``split_documents=False``) so hit ids are doc ids.
    """

    name = "ragatouille"

    def __init__(
        self,
        checkpoint: str | Path | None = None,
        *,
        model: Any = None,
        index_name: str = "tablerag",
        index_root: str | Path | None = None,
        max_document_length: int = 256,
    ) -> None:
        """Use ``model`` (a RAGPretrainedModel) or load one from ``checkpoint``."""
        if model is None:
            if checkpoint is None:
                raise ValueError("RAGatouilleRetriever needs a checkpoint folder or a model")
            model = load_ragatouille_model(checkpoint, index_root=index_root)
        self.model = model
        self.index_name = index_name
        self.max_document_length = max_document_length
        self._docs: dict[str, Doc] = {}
        self._indexed = False

    def __len__(self) -> int:
        """Number of indexed docs."""
        return len(self._docs)

    def add(self, docs: Sequence[Doc]) -> None:
        """Index docs (new ids only): builds the index first, then appends to it."""
        if not docs:
            return
        for doc in docs:
            if doc.id in self._docs:
                raise ValueError(f"duplicate doc id {doc.id!r}")
        texts, ids = [d.text for d in docs], [d.id for d in docs]
        metas = [dict(d.metadata) for d in docs]
        if not self._indexed:
            self.model.index(
                collection=texts,
                document_ids=ids,
                document_metadatas=metas,
                index_name=self.index_name,
                max_document_length=self.max_document_length,
                split_documents=False,
            )
            self._indexed = True
        else:
            self.model.add_to_index(
                new_collection=texts,
                new_document_ids=ids,
                new_document_metadatas=metas,
                index_name=self.index_name,
                split_documents=False,
            )
        self._docs.update((d.id, d) for d in docs)

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """Return up to ``k`` hits from the ColBERT index."""
        if not self._docs or k <= 0:
            return []
        results = self.model.search(query, index_name=self.index_name, k=min(k, len(self._docs)))
        hits = []
        for res in results:
            doc_id = str(res["document_id"])
            meta = res.get("document_metadata") or self._docs.get(doc_id, Doc(doc_id, "")).metadata
            hits.append(Hit(doc_id, float(res["score"]), str(res["content"]), dict(meta)))
        return hits

    def score(self, query: str, ids: Sequence[str]) -> list[float]:
        """Score given docs with the ColBERT model (in-memory re-rank)."""
        if not ids:
            return []
        texts = [self._docs[i].text for i in ids]
        return _rank_scores(self.model, query, texts)


class RAGatouilleReranker(Reranker):
    """Re-rank hits with a real ColBERT model (``RAGPretrainedModel.rerank``)."""

    name = "ragatouille"

    def __init__(self, checkpoint: str | Path | None = None, *, model: Any = None) -> None:
        """Use ``model`` or load one from ``checkpoint``."""
        self.model = model if model is not None else load_ragatouille_model(checkpoint or "")

    def rerank(self, query: str, hits: Sequence[Hit], k: int | None = None) -> list[Hit]:
        """Return the hits re-scored by ColBERT, best first."""
        if not hits:
            return []
        scores = _rank_scores(self.model, query, [h.text for h in hits])
        order = sorted(range(len(hits)), key=lambda i: -scores[i])
        out = [Hit(hits[i].id, scores[i], hits[i].text, hits[i].metadata) for i in order]
        return out if k is None else out[:k]


def _rank_scores(model: Any, query: str, texts: list[str]) -> list[float]:
    """Score ``texts`` with ``model.rerank`` and return scores in input order."""
    results = model.rerank(query=query, documents=texts, k=len(texts))
    scores = [float("-inf")] * len(texts)
    unused = list(range(len(texts)))
    for res in results:
        pos = res.get("result_index")
        if pos is None:  # older versions: match by content
            pos = next(i for i in unused if texts[i] == res["content"])
        scores[int(pos)] = float(res["score"])
        if pos in unused:
            unused.remove(int(pos))
    return scores
