"""Resources load per key: different keys at once, the same key once, no lock held meanwhile."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fakes import BagOfWordsEmbeddings, ScriptedChatModel

from tablerag_agents.resources import Resources
from tablerag_agents.tables import Table


def _resources() -> Resources:
    return Resources(chat_model=ScriptedChatModel([]), embeddings=BagOfWordsEmbeddings())


class _LoadedIndex:
    """What a patched ``load_index`` returns: a name, and ``close`` as Resources needs."""

    def __init__(self, name: str) -> None:
        self.name = name

    def close(self) -> None:
        """Nothing to release."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _LoadedIndex) and other.name == self.name

    __hash__ = None  # type: ignore[assignment]


def test_two_corpus_indexes_load_at_the_same_time(tmp_path: Path, monkeypatch) -> None:
    both_loading = threading.Barrier(2, timeout=5)

    def load(path: Path, embeddings: Any, cache_dir: Path, **kwargs: Any) -> str:
        both_loading.wait()  # breaks (BrokenBarrierError) if the loads run one after the other
        return _LoadedIndex(f"index at {Path(path).name}")

    monkeypatch.setattr("tablerag_agents.retrieval.corpus_folder.load_index", load)
    with _resources() as res, ThreadPoolExecutor(2) as pool:
        loaded = list(pool.map(res.corpus, [tmp_path / "a", tmp_path / "b"]))
    assert [index.name for index in loaded] == ["index at a", "index at b"]


def test_one_corpus_index_loads_once_for_concurrent_callers(tmp_path: Path, monkeypatch) -> None:
    calls = []

    def load(path: Path, embeddings: Any, cache_dir: Path, **kwargs: Any) -> object:
        calls.append(path)
        time.sleep(0.3)
        return _LoadedIndex("a")

    monkeypatch.setattr("tablerag_agents.retrieval.corpus_folder.load_index", load)
    with _resources() as res, ThreadPoolExecutor(8) as pool:
        loaded = list(pool.map(lambda _: res.corpus(tmp_path / "a"), range(8)))
        assert res.corpus(tmp_path / "a") is loaded[0]
    assert len(calls) == 1 and all(index is loaded[0] for index in loaded)


def test_one_table_index_is_built_once_for_concurrent_callers() -> None:
    calls = []

    class SlowEmbeddings(BagOfWordsEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            calls.append(len(texts))
            time.sleep(0.1)
            return super().embed_documents(texts)

    table = Table("t", pd.DataFrame({"a": ["x", "y"], "b": ["1", "2"]}))
    with Resources(chat_model=ScriptedChatModel([]), embeddings=SlowEmbeddings()) as res:
        with ThreadPoolExecutor(6) as pool:
            built = list(pool.map(lambda _: res.table_index(table, budget=100), range(6)))
    assert all(index is built[0] for index in built)
    assert len(calls) == 2  # one build: its schema and its cell embeddings


def test_tables_and_embeddings_answer_while_the_chat_model_loads(monkeypatch) -> None:
    release = threading.Event()
    loading = threading.Event()

    def slow_model(settings: Any) -> str:
        loading.set()
        release.wait(timeout=10)
        return "the model"

    monkeypatch.setattr("tablerag_agents.models.get_chat_model", slow_model)
    res = Resources(embeddings=BagOfWordsEmbeddings())
    res.add_table(Table("t", pd.DataFrame({"a": [1]})))
    with ThreadPoolExecutor(3) as pool:
        model = pool.submit(lambda: res.chat_model)
        assert loading.wait(timeout=5)
        lookups = pool.submit(lambda: (res.get_table("t").id, res.table_ids, res.embeddings))
        try:
            table_id, ids, embeddings = lookups.result(timeout=2)
        finally:
            release.set()
        assert (table_id, ids, isinstance(embeddings, BagOfWordsEmbeddings)) == ("t", ["t"], True)
        assert model.result(timeout=5) == "the model"
    res.close()


def test_a_failed_load_reaches_its_waiters_and_the_next_call_loads_again(
    tmp_path: Path, monkeypatch
) -> None:
    calls = []

    def load(path: Path, embeddings: Any, cache_dir: Path, **kwargs: Any) -> str:
        calls.append(path)
        time.sleep(0.2)
        if len(calls) == 1:
            raise OSError("disk hiccup")
        return _LoadedIndex("index")

    monkeypatch.setattr("tablerag_agents.retrieval.corpus_folder.load_index", load)
    with _resources() as res, ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(res.corpus, tmp_path / "a") for _ in range(4)]
        for future in futures:
            with pytest.raises(OSError, match="disk hiccup"):
                future.result()
        assert len(calls) == 1
        assert res.corpus(tmp_path / "a") == _LoadedIndex("index") and len(calls) == 2
