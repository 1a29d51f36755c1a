"""SubTable and the helpers shared by the filters."""

from __future__ import annotations

import pandas as pd
import pytest

from tablerag_agents.filtering import SubTable, llm_filter, pieta_filter, semantic_filter
from tablerag_agents.filtering.base import display_names
from tablerag_agents.retrieval.rows_columns import named_columns


def test_apply_keeps_original_index_and_table_order(seasons: pd.DataFrame) -> None:
    df = seasons.set_axis([10, 11, 12, 13, 14])
    sub = SubTable.select(df, [3, 1, 1, 99, -1], ["League", "Year", "nope"], "test")
    assert sub.rows == [1, 3]
    assert sub.columns == ["Year", "League"]
    assert sub.n_cells == 4
    out = sub.apply(df)
    assert list(out.index) == [11, 13]
    assert out.loc[13, "League"] == "USL A-League"
    assert sub.model_dump()["n_cells"] == 4


def test_whole_is_a_fallback_with_reason(albums: pd.DataFrame) -> None:
    sub = SubTable.whole(albums, "x", "because")
    assert (sub.fallback, sub.reason, sub.rows) == (True, "because", list(range(8)))
    assert sub.columns[2] == "Chart-Positions\nUK"
    assert sub.apply(albums).equals(albums)


def test_named_columns_match_whole_names_case_insensitively(albums: pd.DataFrame) -> None:
    cols = [str(c) for c in albums.columns]
    found = named_columns("In which YEAR did Chart-Positions UK reach 35?", cols)
    assert found == ["Year", "Chart-Positions\nUK"]
    assert named_columns("what titles were released?", cols) == []  # "Title" is not "titles"


def test_display_names_squeeze_whitespace_unless_that_collides() -> None:
    assert display_names(["a\nb", "c"]) == ["a b", "c"]
    assert display_names(["a\nb", "a b"]) == ["a\nb", "a b"]


@pytest.mark.parametrize("shape", [(0, 2), (3, 0)])
def test_every_filter_refuses_an_empty_table(shape: tuple[int, int]) -> None:
    df = pd.DataFrame(index=range(shape[0]), columns=[f"c{i}" for i in range(shape[1])])
    with pytest.raises(ValueError, match="empty table"):
        semantic_filter("q", df, embeddings=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="empty table"):
        llm_filter("q", df, model=None, sandbox=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="empty table"):
        pieta_filter("q", df, model=None)  # type: ignore[arg-type]
