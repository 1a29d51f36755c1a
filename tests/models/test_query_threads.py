"""A query is encoded on ``query_threads`` torch threads; a batch keeps every thread."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from tablerag_agents.models.embeddings import SMALL_BATCH, SentenceTransformerEmbeddings
from tablerag_agents.retrieval.colbert import SharedQueryEncoder


class ThreadRecordingModel:
    """Stands in for a SentenceTransformer: records torch's thread count at each encode."""

    def __init__(self) -> None:
        self.threads: list[int] = []

    def encode(self, texts: list[str], output_value: str | None = "x", **_: Any) -> Any:
        self.threads.append(torch.get_num_threads())
        if output_value is None:
            return [
                {
                    "attention_mask": torch.ones(2),
                    "token_embeddings": torch.ones(2, 4),
                    "sentence_embedding": torch.ones(4),
                }
                for _ in texts
            ]
        return np.ones((len(texts), 4), dtype=np.float32)


@pytest.fixture
def two_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def _embeddings(tmp_path: Path, **kwargs: Any) -> tuple[SentenceTransformerEmbeddings, Any]:
    embeddings = SentenceTransformerEmbeddings(tmp_path, **kwargs)
    model = ThreadRecordingModel()
    embeddings._model = model
    return embeddings, model


def test_a_query_runs_on_one_thread_and_a_batch_on_all(tmp_path: Path, two_threads) -> None:
    embeddings, model = _embeddings(tmp_path)
    embeddings.embed_query("deepest lake in Turkey")
    embeddings.embed_documents(["a"] * (SMALL_BATCH + 1))
    assert model.threads == [1, 2]
    assert torch.get_num_threads() == 2  # restored after the query


def test_the_shared_query_pass_uses_the_setting(tmp_path: Path, two_threads) -> None:
    embeddings, model = _embeddings(tmp_path, query_threads=1)
    shared = SharedQueryEncoder(embeddings)
    shared.embed_query("which river is longest")
    shared.encode_documents(["t"] * 64)
    assert model.threads == [1, 2]


def test_query_threads_none_leaves_torch_alone(tmp_path: Path, two_threads) -> None:
    embeddings, model = _embeddings(tmp_path, query_threads=None)
    embeddings.embed_query("q")
    assert model.threads == [2]
    with pytest.raises(ValueError, match="query_threads"):
        SentenceTransformerEmbeddings(tmp_path, query_threads=0)
