"""Semantic filter: dense cosine and MaxSim over rows and columns."""

from __future__ import annotations

import pandas as pd
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings

from tablerag_agents.filtering import semantic_filter
from tablerag_agents.retrieval.rows_columns import column_texts, row_texts


def test_row_and_column_texts(seasons: pd.DataFrame) -> None:
    assert row_texts(seasons)[2] == (
        "Year: 2003; Division: 2; League: USL A-League; Regular Season: 3rd, Pacific; "
        "Avg. Attendance: 5,871"
    )
    assert column_texts(seasons)[2] == "League: USL A-League, USL First Division"


@pytest.mark.parametrize("scorer", ["dense", "maxsim"])
def test_keeps_the_row_of_the_entity_in_the_question(
    albums: pd.DataFrame, bag_of_words: Embeddings, token_encoder, scorer: str
) -> None:
    sub = semantic_filter(
        "In which year was the album Novella released?",
        albums,
        bag_of_words,
        top_rows=2,
        scorer=scorer,  # type: ignore[arg-type]
        token_encoder=token_encoder,
    )
    assert 6 in sub.rows and len(sub.rows) == 2
    assert sub.method == f"semantic:{scorer}" and not sub.fallback
    assert sub.apply(albums).loc[6, "Title"] == "Novella"


def test_keeps_top_columns_plus_the_ones_the_question_names(
    seasons: pd.DataFrame, bag_of_words: Embeddings
) -> None:
    sub = semantic_filter(
        "which league was the team in during 2003? give the Division too",
        seasons,
        bag_of_words,
        top_rows=1,
        top_columns=1,
    )
    assert sub.rows == [2]  # the only row with "2003"
    assert sub.columns == ["Division", "League"]  # best column + the named one, in table order


def test_small_tables_keep_every_row_and_column(
    seasons: pd.DataFrame, bag_of_words: Embeddings
) -> None:
    sub = semantic_filter("anything", seasons, bag_of_words, top_rows=10, top_columns=8)
    assert sub.rows == [0, 1, 2, 3, 4] and len(sub.columns) == 5


def test_runs_with_langchain_fake_embeddings(albums: pd.DataFrame) -> None:
    emb = DeterministicFakeEmbedding(size=32)
    sub = semantic_filter("novella", albums, emb, top_rows=3, top_columns=2)
    assert len(sub.rows) == 3 and sub.rows == sorted(sub.rows)
    assert len(sub.columns) == 2


def test_failing_embeddings_fall_back_to_the_whole_table(seasons: pd.DataFrame) -> None:
    class Broken(DeterministicFakeEmbedding):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[1.0]]  # wrong shape

    sub = semantic_filter("q", seasons, Broken(size=4), top_rows=2)
    assert sub.fallback and "scoring failed" in sub.reason and len(sub.rows) == 5


def test_maxsim_needs_token_vectors(seasons: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="token_encoder"):
        semantic_filter("q", seasons, DeterministicFakeEmbedding(size=4), scorer="maxsim")
    with pytest.raises(ValueError, match="top_rows"):
        semantic_filter("q", seasons, DeterministicFakeEmbedding(size=4), top_rows=0)
    with pytest.raises(ValueError, match="unknown scorer"):
        semantic_filter("q", seasons, DeterministicFakeEmbedding(size=4), scorer="bm25")  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.parametrize("scorer", ["dense", "maxsim"])
def test_real_minilm_keeps_the_entity_row(albums: pd.DataFrame, scorer: str) -> None:
    from tablerag_agents.models import get_embeddings

    sub = semantic_filter(
        "how high did Scheherazade and Other Stories chart in the US?",
        albums,
        get_embeddings(),
        top_rows=2,
        top_columns=3,
        scorer=scorer,  # type: ignore[arg-type]
    )
    assert 5 in sub.rows
