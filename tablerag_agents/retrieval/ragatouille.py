"""RAGatouille (real ColBERT) backend behind the same ``Retriever`` interface.

Optional: needs the ``[colbert]`` extra (``ragatouille==0.0.9.post2`` with
``transformers<5``, ``sentence-transformers<6``, ``datasets<5``, ``psutil``),
which cannot share a venv with the default stack (transformers 5), and a
*local* ColBERT checkpoint folder (one holding ``artifact.metadata``). Without
them, use the offline MaxSim scorer in :mod:`tablerag_agents.retrieval.colbert`.

Docs go into a PLAID index on disk (``<index_root>/colbert/indexes/<index_name>``);
it works on CPU (colbert-ai compiles its C++ extensions on first use, a few
minutes, cached under ``TORCH_EXTENSIONS_DIR``) and can be reopened with
:meth:`RAGatouilleRetriever.load`. Hub downloads are switched off.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tablerag_agents.errors import ModelError
from tablerag_agents.retrieval.base import Doc, Hit, Reranker, Retriever

logger = logging.getLogger(__name__)

_INSTALL_HINT = (
    "the RAGatouille backend needs the 'colbert' extra in its own venv "
    "(it requires transformers<5): pip install -c constraints.txt 'tablerag-agents[colbert]'"
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


def _import_ragatouille() -> Any:
    """Import ``RAGPretrainedModel`` offline, or raise ``ModelError`` with the install command."""
    if importlib.util.find_spec("ragatouille") is None:
        raise ModelError(f"{_INSTALL_HINT} (ragatouille is not installed)")
    # Before the import: huggingface_hub and transformers read these once.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    _install_langchain_shim()
    try:
        from ragatouille import RAGPretrainedModel
    except ImportError as exc:
        raise ModelError(f"{_INSTALL_HINT} ({exc})") from exc
    return RAGPretrainedModel


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(f"cannot read {path}: {exc}") from exc


def _check_checkpoint(path: Path) -> None:
    """Refuse folders that are not local ColBERT checkpoints or that need remote code."""
    if not str(path) or not path.is_dir():
        raise ModelError(f"ColBERT checkpoint folder not found: {path} (no hub downloads)")
    if not (path / "artifact.metadata").is_file():
        # Without it colbert-ai loads the folder with a random projection layer and
        # then looks up its default base model (bert-base-uncased) on the hub.
        raise ModelError(f"{path} is not a ColBERT checkpoint (no artifact.metadata)")
    for name in ("config.json", "tokenizer_config.json"):
        config = path / name
        if config.is_file():
            data = _read_json(config)
            if isinstance(data, dict) and "auto_map" in data:
                # colbert-ai loads configs with trust_remote_code=True.
                raise ModelError(
                    f"{path} needs custom model code (auto_map in {name}); refusing to run it"
                )


def _check_index(path: Path) -> None:
    """Check the checkpoint(s) an index folder names, as building checks its checkpoint.

    colbert-ai reopens an index with the checkpoint named in ``metadata.json``
    (``plan.json`` when that fails), so a crafted index could name any folder.
    """
    for name in ("metadata.json", "plan.json"):
        file = path / name
        if not file.is_file():
            continue
        data = _read_json(file)
        config = data.get("config", data) if isinstance(data, dict) else None
        checkpoint = config.get("checkpoint") if isinstance(config, dict) else None
        if not isinstance(checkpoint, str) or not checkpoint:
            raise ModelError(f"{file} names no checkpoint folder")
        _check_checkpoint(Path(checkpoint))


def _own_run_context(model: Any) -> contextlib.AbstractContextManager[Any]:
    """Make ``model``'s index root the current colbert-ai run config for one call.

    colbert-ai keeps one process-wide stack of run configs and RAGatouille pushes
    each model's config once at load time (and pops the top one when a model is
    garbage collected), so with several models alive the indexer would write
    into another model's index root.
    """
    run_config = getattr(getattr(model, "model", None), "run_config", None)
    if run_config is None:
        return contextlib.nullcontext()
    from colbert.infra import Run

    return Run().context(run_config)


def load_ragatouille_model(checkpoint: str | Path, *, index_root: str | Path | None = None) -> Any:
    """Load ``RAGPretrainedModel`` from a local checkpoint folder.

    Raises:
        ModelError: If RAGatouille is not installed or the folder is not a ColBERT checkpoint.
    """
    path = Path(checkpoint)
    if not str(checkpoint) or not path.is_dir():
        raise ModelError(f"ColBERT checkpoint folder not found: {path} (no hub downloads)")
    rag_model = _import_ragatouille()
    _check_checkpoint(path)
    root = str(index_root) if index_root is not None else None
    return rag_model.from_pretrained(str(path), index_root=root, verbose=0)


class RAGatouilleRetriever(Retriever):
    """ColBERT (PLAID index) retrieval through RAGatouille.

    Docs are indexed whole (``split_documents=False``, truncated to
    ``max_document_length`` tokens) so hit ids are doc ids.
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

    @classmethod
    def load(cls, index_path: str | Path) -> RAGatouilleRetriever:
        """Reopen an index folder written by :meth:`add` (its checkpoint must still exist).

        The checkpoint the index names gets the same checks as when building
        (a local ColBERT folder, no custom model code), before anything loads.

        Raises:
            ModelError: If RAGatouille is missing, the folder is not a RAGatouille
                index, or its checkpoint is refused.
        """
        path = Path(index_path)
        if not (path / "metadata.json").is_file() or not (path / "collection.json").is_file():
            raise ModelError(f"no RAGatouille index at {path}")
        _check_index(path)
        model = _import_ragatouille().from_index(path, verbose=0)
        retriever = cls(model=model, index_name=path.name)
        colbert = model.model
        metas = colbert.docid_metadata_map or {}
        for pid, doc_id in sorted(colbert.pid_docid_map.items()):
            text = colbert.collection[pid]
            retriever._docs[doc_id] = Doc(doc_id, text, dict(metas.get(doc_id) or {}))
        retriever._indexed = True
        return retriever

    @property
    def index_path(self) -> Path | None:
        """The PLAID index folder, once something was indexed."""
        colbert = getattr(self.model, "model", None)
        path = getattr(colbert, "index_path", None) if self._indexed else None
        return Path(path) if path else None

    def __len__(self) -> int:
        """Number of indexed docs."""
        return len(self._docs)

    def add(self, docs: Sequence[Doc]) -> None:
        """Index docs (new ids only): builds the index first, then appends to it."""
        if not docs:
            return
        seen = set(self._docs)
        for doc in docs:
            if doc.id in seen:
                raise ValueError(f"duplicate doc id {doc.id!r}")
            seen.add(doc.id)
        texts, ids = [d.text for d in docs], [d.id for d in docs]
        metas = [dict(d.metadata) for d in docs]
        with _own_run_context(self.model):
            if not self._indexed:
                # The default (True) makes colbert-ai wait 20 s before replacing an index.
                self.model.index(
                    collection=texts,
                    document_ids=ids,
                    document_metadatas=metas,
                    index_name=self.index_name,
                    max_document_length=self.max_document_length,
                    split_documents=False,
                    overwrite_index="force_silent_overwrite",
                )
            else:
                self.model.add_to_index(
                    new_collection=texts,
                    new_document_ids=ids,
                    new_document_metadatas=metas,
                    index_name=self.index_name,
                    split_documents=False,
                )
                # RAGatouille 0.0.9 keeps searching with the searcher loaded before
                # the update, which does not see the new docs: drop it so it reloads.
                model_index = getattr(getattr(self.model, "model", None), "model_index", None)
                if model_index is not None:
                    model_index.searcher = None
        self._indexed = True
        self._docs.update((d.id, d) for d in docs)

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """Return up to ``k`` hits from the ColBERT index."""
        if not self._docs or k <= 0:
            return []
        with _own_run_context(self.model):
            results = self.model.search(
                query, index_name=self.index_name, k=min(k, len(self._docs))
            )
        return [self._hit(res) for res in results]

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        """Search several queries in one batch."""
        if len(queries) < 2 or not self._docs or k <= 0:
            return [self.search(q, k) for q in queries]
        with _own_run_context(self.model):
            results = self.model.search(
                list(queries), index_name=self.index_name, k=min(k, len(self._docs))
            )
        return [[self._hit(res) for res in per_query] for per_query in results]

    def _hit(self, res: dict[str, Any]) -> Hit:
        doc_id = str(res["document_id"])
        meta = res.get("document_metadata") or self._docs.get(doc_id, Doc(doc_id, "")).metadata
        return Hit(doc_id, float(res["score"]), str(res["content"]), dict(meta))

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
        if model is None:
            if checkpoint is None:
                raise ValueError("RAGatouilleReranker needs a checkpoint folder or a model")
            model = load_ragatouille_model(checkpoint)
        self.model = model

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
    with _own_run_context(model):
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
