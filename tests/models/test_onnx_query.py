"""One query on ONNX Runtime: the same vectors as torch, exported once, and torch
whenever ONNX cannot be used (missing package, damaged file, another model)."""

from __future__ import annotations

import builtins
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tablerag_agents.models.embeddings import SentenceTransformerEmbeddings, local_minilm_path
from tablerag_agents.models.onnx_query import OnnxQueryEncoder
from tablerag_agents.retrieval.colbert import SharedQueryEncoder

pytest.importorskip("onnxruntime")

QUERIES = [
    "which lake in turkey is the deepest?",
    "Who built many of the facilities at the southernmost place from the National Register?",
    "1,234 (est.)",
    "x " * 400,  # longer than the model's 256 tokens: truncated alike
]


@pytest.fixture(scope="module")
def onnx_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx")


@pytest.fixture(scope="module")
def on_torch() -> SentenceTransformerEmbeddings:
    return SentenceTransformerEmbeddings(local_minilm_path(), query_backend="torch")


@pytest.fixture(scope="module")
def on_onnx(onnx_dir: Path) -> SentenceTransformerEmbeddings:
    return SentenceTransformerEmbeddings(local_minilm_path(), onnx_dir=onnx_dir)


def test_onnx_gives_torchs_vectors(
    on_onnx: SentenceTransformerEmbeddings, on_torch: SentenceTransformerEmbeddings, onnx_dir: Path
) -> None:
    for text in QUERIES:
        vector, tokens = on_onnx.query_outputs(text)
        ref_vector, ref_tokens = on_torch.query_outputs(text)
        assert tokens.shape == ref_tokens.shape and vector.shape == (384,)
        assert np.abs(tokens - ref_tokens).max() < 1e-5
        assert np.abs(vector - ref_vector).max() < 1e-5
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
    assert isinstance(on_onnx._onnx_encoder(), OnnxQueryEncoder)
    assert on_torch._onnx_encoder() is None
    # The dense channel's query vector is the pooled one torch computes for documents.
    doc_vector = np.asarray(on_torch.embed_documents([QUERIES[0]])[0])
    assert np.abs(np.asarray(on_onnx.embed_query(QUERIES[0])) - doc_vector).max() < 1e-5
    assert len(list(onnx_dir.glob("*.onnx"))) == 1


def test_the_export_is_reused_and_the_shared_pass_uses_it(
    on_onnx: SentenceTransformerEmbeddings, onnx_dir: Path
) -> None:
    on_onnx.embed_query("warm up")  # the export exists after this
    (exported,) = onnx_dir.glob("*.onnx")
    stamp = exported.stat().st_mtime_ns
    again = SentenceTransformerEmbeddings(local_minilm_path(), onnx_dir=onnx_dir)
    shared = SharedQueryEncoder(again)
    shared.embed_query("deepest lake")
    assert isinstance(again._onnx_encoder(), OnnxQueryEncoder)
    assert exported.stat().st_mtime_ns == stamp  # loaded, not exported again
    tokens = shared.tokens(["deepest lake"])[0]
    assert np.array_equal(tokens, again.query_outputs("deepest lake")[1])


def test_a_damaged_export_falls_back_to_torch(
    tmp_path: Path,
    on_onnx: SentenceTransformerEmbeddings,
    on_torch: SentenceTransformerEmbeddings,
    onnx_dir: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    on_onnx.embed_query("warm up")
    (exported,) = onnx_dir.glob("*.onnx")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / exported.name).write_bytes(b"not an onnx model")
    embeddings = SentenceTransformerEmbeddings(local_minilm_path(), onnx_dir=broken)
    with caplog.at_level(logging.WARNING):
        vector, _ = embeddings.query_outputs(QUERIES[0])
    assert embeddings._onnx_encoder() is None and "queries are encoded with torch" in caplog.text
    assert np.array_equal(vector, on_torch.query_outputs(QUERIES[0])[0])


def test_without_onnxruntime_queries_stay_on_torch(
    tmp_path: Path, on_torch: SentenceTransformerEmbeddings, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = builtins.__import__

    def no_onnxruntime(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "onnxruntime":
            raise ImportError("No module named 'onnxruntime'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_onnxruntime)
    embeddings = SentenceTransformerEmbeddings(local_minilm_path(), onnx_dir=tmp_path)
    vector, _ = embeddings.query_outputs(QUERIES[1])
    assert embeddings._onnx_encoder() is None and not list(tmp_path.iterdir())
    assert np.array_equal(vector, on_torch.query_outputs(QUERIES[1])[0])
    with pytest.raises(ValueError, match="query_backend"):
        SentenceTransformerEmbeddings(local_minilm_path(), query_backend="gpu")  # type: ignore[arg-type]
