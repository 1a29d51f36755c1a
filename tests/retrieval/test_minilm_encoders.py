"""The real MiniLM: token encoder, shared query pass and batched priming agree."""

from __future__ import annotations

import numpy as np
import pytest

from tablerag_agents.retrieval.colbert import (
    ColBERTRetriever,
    SharedQueryEncoder,
    maxsim,
    sentence_transformer_token_encoder,
)

pytestmark = pytest.mark.slow

QUERIES = ["who won the 1990 race ?", "population of the hometown of the tallest player"]


@pytest.fixture(scope="module")
def minilm():
    from tablerag_agents.models.embeddings import get_embeddings

    return get_embeddings()


def test_token_vectors_are_unit_rows_with_special_tokens(minilm):
    mats = sentence_transformer_token_encoder(minilm)(["hello world", "a b c d"])
    assert [m.shape for m in mats] == [(4, 384), (6, 384)]  # [CLS] ... [SEP]
    for m in mats:
        np.testing.assert_allclose(np.linalg.norm(m, axis=1), 1.0, atol=1e-5)


def test_shared_pass_matches_separate_encoders(minilm):
    shared = SharedQueryEncoder(minilm)
    tokens = sentence_transformer_token_encoder(minilm)
    for query in QUERIES:
        np.testing.assert_allclose(shared.embed_query(query), minilm.embed_query(query), atol=1e-5)
        np.testing.assert_allclose(shared.tokens([query])[0], tokens([query])[0], atol=1e-4)
    shared.prime(QUERIES)  # batched and padded: must give the same vectors
    for query in QUERIES:
        np.testing.assert_allclose(shared.embed_query(query), minilm.embed_query(query), atol=1e-5)
        np.testing.assert_allclose(shared.tokens([query])[0], tokens([query])[0], atol=1e-4)
    assert shared.name == minilm.name


def test_maxsim_ranks_related_text_first(minilm):
    from tablerag_agents.retrieval.base import Doc

    retriever = ColBERTRetriever(sentence_transformer_token_encoder(minilm))
    retriever.add(
        [
            Doc("race", "1990 Tour de France general classification winners"),
            Doc("nba", "Roster of the 2011 Texas basketball team with height and hometown"),
            Doc("birds", "List of birds of Hawaii"),
        ]
    )
    assert retriever.search(QUERIES[0], k=1)[0].id == "race"
    assert retriever.search(QUERIES[1], k=1)[0].id == "nba"
    qt = retriever.encode_query(QUERIES[1])
    assert retriever.score(QUERIES[1], ["birds"])[0] == pytest.approx(
        maxsim(qt, sentence_transformer_token_encoder(minilm)(["List of birds of Hawaii"])[0]),
        abs=1e-2,
    )


def test_one_document_pass_matches_the_two_separate_passes(minilm):
    texts = ["Marathon world record progression | Men | Time | Name", "a", "List of lakes " * 20]
    pairs = SharedQueryEncoder(minilm).encode_documents(texts)  # batched: padded to the longest
    tokens = sentence_transformer_token_encoder(minilm)(texts)
    vectors = minilm.embed_documents(texts)
    for (vector, mat), want_vec, want_mat in zip(pairs, vectors, tokens, strict=True):
        np.testing.assert_allclose(vector, want_vec, atol=1e-5)
        assert mat.shape == want_mat.shape
        np.testing.assert_allclose(mat, want_mat, atol=1e-4)
