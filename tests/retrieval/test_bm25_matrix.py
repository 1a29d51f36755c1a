"""BM25 token ids as flat arrays and the NumPy-built score matrix (same as bm25s, less memory)."""

from __future__ import annotations

import json
import random
import tracemalloc
import zipfile

import bm25s
import numpy as np
import pandas as pd
import pytest

from tablerag_agents.errors import MalformedIndexError
from tablerag_agents.retrieval import bm25_matrix
from tablerag_agents.retrieval.base import Doc
from tablerag_agents.retrieval.bm25 import BM25Retriever
from tablerag_agents.retrieval.bm25_matrix import TokenIds, build_score_matrix

METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")


def _token_lists(n_docs: int, seed: int = 0) -> list[list[str]]:
    """Zipf-like words, some docs empty, some words repeated in a doc."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(300)]
    weights = [1 / (i + 1) for i in range(300)]
    return [rng.choices(words, weights, k=rng.choice([0, 1, 3, 20, 80])) for _ in range(n_docs)]


def _bm25s_arrays(token_lists: list[list[str]], method: str) -> tuple[bm25s.BM25, TokenIds]:
    ids = TokenIds()
    ids.extend(token_lists)
    engine = bm25s.BM25(k1=1.5, b=0.75, method=method)
    lists = [[ids.vocab[t] for t in doc] for doc in token_lists]
    engine.index(
        bm25s.tokenization.Tokenized(ids=lists, vocab=dict(ids.vocab)), show_progress=False
    )
    return engine, ids


@pytest.mark.parametrize("method", METHODS)
def test_score_matrix_equals_bm25s(method: str) -> None:
    token_lists = _token_lists(400)
    engine, ids = _bm25s_arrays(token_lists, method)
    scores, nonoccurrence = build_score_matrix(ids, k1=1.5, b=0.75, method=method)
    assert scores["num_docs"] == engine.scores["num_docs"] == 400
    for key in ("data", "indices", "indptr"):
        assert scores[key].dtype == engine.scores[key].dtype, key
        assert np.array_equal(scores[key], engine.scores[key]), key
    if engine.nonoccurrence_array is None:
        assert nonoccurrence is None
    else:
        assert np.array_equal(nonoccurrence, engine.nonoccurrence_array)


def test_score_matrix_is_the_same_in_small_pieces(monkeypatch) -> None:
    token_lists = _token_lists(300, seed=1)
    whole = TokenIds()
    whole.extend(token_lists)
    pieces = TokenIds()
    for start in range(0, 300, 7):  # many extend calls ...
        pieces.extend(token_lists[start : start + 7])
    monkeypatch.setattr(bm25_matrix, "_CHUNK_TOKENS", 50)  # ... and many token chunks
    expected, _ = build_score_matrix(whole, k1=1.2, b=0.7, method="lucene")
    got, _ = build_score_matrix(pieces, k1=1.2, b=0.7, method="lucene")
    for key in ("data", "indices", "indptr"):
        assert np.array_equal(got[key], expected[key])


def test_token_ids_number_words_by_first_occurrence() -> None:
    ids = TokenIds()
    ids.extend([["b", "a", "b"], [], ["c", "a"]])
    ids.extend([["d", "b"]])
    assert ids.vocab == {"b": 0, "a": 1, "c": 2, "d": 3}
    assert len(ids) == 4 and ids.n_tokens() == 7
    flat, lengths = ids.select([3, 0, 1])
    assert flat.tolist() == [3, 0, 0, 1, 0] and lengths.tolist() == [2, 3, 0]


def test_building_the_matrix_holds_one_chunk_of_temporaries(monkeypatch) -> None:
    """bm25s.index turns every token id into a Python int (~36 B each): GBs at 100k tables.

    Built here, the temporaries are bounded by the chunk: 600k tokens took 42.5 MB
    through bm25s, 11.9 MB in chunks of 65,536 tokens (4.5 MB of it the matrix).
    """
    monkeypatch.setattr(bm25_matrix, "_CHUNK_TOKENS", 1 << 16)
    retriever = BM25Retriever(store_texts=False)
    rng = random.Random(2)
    docs = [Doc(f"d{i}", "") for i in range(2000)]
    words = [f"w{i}" for i in range(5000)]
    retriever.add_tokenized(docs, [rng.choices(words, k=300) for _ in docs])  # 600k tokens
    tracemalloc.start()
    try:
        retriever.scores_all("w1 w2")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20, f"building the matrix allocated {peak / 2**20:.1f} MB"


def test_an_index_without_texts_scores_the_same_and_saves_no_texts(corpus, tmp_path) -> None:
    with_texts = BM25Retriever()
    without = BM25Retriever(store_texts=False)
    with_texts.add(corpus)
    without.add(corpus)
    query = "capital city of France"
    assert np.array_equal(without.scores_all(query), with_texts.scores_all(query))
    hits = without.search(query, k=2)
    assert [h.id for h in hits] == [h.id for h in with_texts.search(query, k=2)]
    assert {h.text for h in hits} == {""} and hits[0].metadata == {"lang": "fr"}
    without.save(tmp_path / "i")
    assert set(pd.read_parquet(tmp_path / "i" / "docs.parquet")["text"]) == {""}
    loaded = BM25Retriever.load(tmp_path / "i")
    assert not loaded.store_texts
    assert np.array_equal(loaded.scores_all(query), with_texts.scores_all(query))
    loaded.add([Doc("rome", "Rome is the capital of Italy")])  # token ids read back, appended
    assert loaded.search("capital of Italy", k=1)[0].id == "rome"


def test_token_ids_are_saved_uncompressed(corpus, tmp_path) -> None:
    """Compressing them took ~11 s per 9M token ids: minutes of every save at 100k tables."""
    retriever = BM25Retriever(store_texts=False)
    retriever.add(corpus)
    retriever.save(tmp_path)
    with zipfile.ZipFile(tmp_path / "tokens.npz") as archive:
        assert {i.compress_type for i in archive.infolist()} == {zipfile.ZIP_STORED}
    assert len(TokenIds.load(tmp_path)) == len(corpus)


def test_an_index_saved_with_texts_loads_without_them(corpus, tmp_path) -> None:
    full = BM25Retriever()
    full.add(corpus)
    full.save(tmp_path / "i")
    (tmp_path / "i" / "tokens.npz").unlink()  # an index from before the token ids were saved
    loaded = BM25Retriever.load(tmp_path / "i", store_texts=False)
    assert {d.text for d in loaded._docs} == {""}
    loaded.add([Doc("rome", "Rome is the capital of Italy")])  # re-tokenized from the file
    assert [h.id for h in loaded.search("capital Germany", k=5)][:1] == ["berlin"]


def test_an_index_without_texts_or_token_ids_is_refused(corpus, tmp_path) -> None:
    without = BM25Retriever(store_texts=False)
    without.add(corpus)
    without.save(tmp_path / "i")
    (tmp_path / "i" / "tokens.npz").unlink()
    loaded = BM25Retriever.load(tmp_path / "i")
    with pytest.raises(MalformedIndexError, match="tokens.npz"):
        loaded.add([Doc("rome", "Rome")])


@pytest.mark.parametrize(
    "ids, lengths, vocab",
    [
        ([0, 1, 10_000], [3], None),  # an id outside the vocabulary
        ([0, 1], [3], None),  # lengths that do not add up
        ([0, 1, 2], [3], {"a": 0, "b": 0, "c": 2}),  # a vocabulary that repeats an id
    ],
)
def test_malformed_token_ids_are_refused(corpus, tmp_path, ids, lengths, vocab) -> None:
    retriever = BM25Retriever(store_texts=False)
    retriever.add(corpus)
    retriever.save(tmp_path / "i")
    np.savez_compressed(
        tmp_path / "i" / "tokens.npz", ids=np.asarray(ids), lengths=np.asarray(lengths)
    )
    if vocab is not None:
        (tmp_path / "i" / "token_vocab.json").write_text(json.dumps(vocab))
    with pytest.raises(MalformedIndexError):
        TokenIds.load(tmp_path / "i")


def test_subset_scores_like_a_new_index(corpus) -> None:
    full = BM25Retriever(store_texts=False)
    full.add(corpus)
    part = full.subset(["volcano", "paris", "piano"])
    fresh = BM25Retriever()
    fresh.add([corpus[3], corpus[0], corpus[4]])
    for query in ("capital of France", "island volcano", "piano strings", "nothing"):
        assert np.allclose(part.scores_all(query), fresh.scores_all(query))
    assert len(part._token_cache().vocab) < len(full._token_cache().vocab)
