"""One query at a time through the embedding model on ONNX Runtime.

A corpus search encodes its query once, and with torch on one thread that pass
costs ~20-27 ms for a question on a 2-core machine: most of a hybrid
search. ONNX Runtime runs the same network about 2x faster for one question
(``bench/query_encoder.py``). The model is exported once into the cache
(``torch.onnx`` needs the ``onnx`` package), keyed by a hash of its weights, and
checked against torch on a probe text each time it is loaded; when
``onnxruntime`` or ``onnx`` is missing, the model is not a mean-pooled
transformer, or the probe differs, queries stay on torch. Batches (indexing,
primed query lists) always run on torch.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

PROBE = "which lake in turkey is the deepest? 1,234 km (est.)"
"""Text encoded by both runtimes when a model is loaded."""
TOLERANCE = 1e-4
"""Largest difference of a token vector component accepted between the runtimes."""
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class OnnxQueryEncoder:
    """Token vectors of one text from an exported transformer on ONNX Runtime.

    Use :func:`load_onnx_query_encoder`; calling it returns the raw (not
    normalised) per-token outputs, as sentence-transformers'
    ``output_value="token_embeddings"`` does.
    """

    def __init__(self, session: Any, tokenizer: Any, max_length: int) -> None:
        """Wrap a loaded session and the model's tokenizer."""
        self.session = session
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.inputs = [i.name for i in session.get_inputs()]

    def __call__(self, text: str) -> np.ndarray:
        """The (n_tokens, dim) token outputs of ``text`` (truncated as the model is)."""
        features = self.tokenizer(
            [text], truncation=True, max_length=self.max_length, return_tensors="np"
        )
        feed = {name: features[name].astype(np.int64) for name in self.inputs}
        return np.asarray(self.session.run(None, feed)[0][0], dtype=np.float32)


def _mean_pooled_transformer(st_model: Any) -> Any | None:
    """The Hugging Face module of a Transformer + mean Pooling (+ Normalize) model, else None."""
    try:
        modules = list(st_model)
    except TypeError:  # not a SentenceTransformer (a stand-in, another wrapper)
        return None
    kinds = [type(m).__name__ for m in modules]
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        return None
    pooling = modules[1]
    mode = getattr(pooling, "pooling_mode", None)
    if mode is None and getattr(pooling, "pooling_mode_mean_tokens", False):
        mode = "mean"  # older sentence-transformers
    return getattr(modules[0], "auto_model", None) if mode == "mean" else None


def weights_digest(model_dir: Path) -> str:
    """A hash of the model folder's weight and config files (the export's cache key)."""
    digest = hashlib.sha256()
    for path in sorted(model_dir.rglob("*")):
        if path.is_file() and path.suffix in (".safetensors", ".bin", ".json"):
            digest.update(path.relative_to(model_dir).as_posix().encode())
            with path.open("rb") as fh:
                while block := fh.read(1 << 20):
                    digest.update(block)
    return digest.hexdigest()[:16]


def _export(auto_model: Any, tokenizer: Any, path: Path) -> None:
    """Export ``auto_model``'s last hidden state to ``path`` (atomically)."""
    import torch

    class _Tokens(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *args: Any) -> Any:
            return self.inner(**dict(zip(names, args, strict=True))).last_hidden_state

    features = tokenizer([PROBE], return_tensors="pt")
    names = [n for n in _INPUTS if n in features]
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".onnx.tmp")
    os.close(fd)
    logger.info("exporting %s to ONNX for queries (once; ~10 s)", path.name)
    try:
        with torch.inference_mode(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer notes about the model's Python branches
            torch.onnx.export(
                _Tokens(auto_model.eval()),
                tuple(features[n] for n in names),
                tmp,
                input_names=names,
                output_names=["tokens"],
                dynamic_axes={n: {0: "batch", 1: "length"} for n in [*names, "tokens"]},
                opset_version=17,
                dynamo=False,
            )
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def load_onnx_query_encoder(
    st_model: Any, model_dir: Path, cache_dir: Path, *, threads: int = 1
) -> OnnxQueryEncoder | None:
    """The ONNX encoder of ``st_model`` (exported into ``cache_dir`` on first use), or
    None when it cannot be used (then the caller keeps torch; the reason is logged)."""
    try:
        import onnxruntime
    except ImportError:
        logger.info("onnxruntime is not installed: queries are encoded with torch")
        return None
    auto_model = _mean_pooled_transformer(st_model)
    if auto_model is None:
        logger.info("not a mean-pooled transformer: queries are encoded with torch")
        return None
    path = cache_dir / f"{model_dir.name}-{weights_digest(model_dir)}.onnx"
    if not path.is_file():
        try:
            _export(auto_model, st_model.tokenizer, path)
        except Exception as exc:  # noqa: BLE001 - torch keeps working without the export
            logger.warning("ONNX export failed (%s): queries are encoded with torch", exc)
            return None
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    try:
        session = onnxruntime.InferenceSession(
            str(path), options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:  # noqa: BLE001 - a damaged cache file: fall back
        logger.warning("cannot load %s (%s): queries are encoded with torch", path, exc)
        return None
    encoder = OnnxQueryEncoder(session, st_model.tokenizer, st_model.max_seq_length)
    expected = st_model.encode([PROBE], output_value="token_embeddings", show_progress_bar=False)[0]
    expected = expected.detach().cpu().numpy()
    got = encoder(PROBE)
    if got.shape != expected.shape or float(np.abs(got - expected).max()) > TOLERANCE:
        logger.warning("ONNX outputs differ from torch on a probe: queries use torch")
        return None
    return encoder
