"""PieTa: windows, lenient cell picks, union, and rounds to a fixed point."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from fakes import ScriptedChatModel
from langchain_core.embeddings import Embeddings
from pieta_fakes import WindowPicker

from tablerag_agents.filtering import pieta_filter
from tablerag_agents.filtering.pieta import (
    WindowGrid,
    divide,
    parse_picks,
    plan_grid,
    window_starts,
)


def pick(rows: list[int], columns: list[str]) -> str:
    return json.dumps({"rows": rows, "columns": columns})


def test_window_starts_follow_the_paper() -> None:
    assert window_starts(5, 3, 1) == [0, 1, 2]
    assert window_starts(2, 3, 1) == [0]
    assert window_starts(7, 3, 3) == [0, 3, 4]  # the last window is flush with the edge
    wins = divide([10, 11, 12, 13], ["a", "b", "c"], WindowGrid(3, 3, 1, 1))
    assert wins == [([10, 11, 12], ["a", "b", "c"]), ([11, 12, 13], ["a", "b", "c"])]


def test_parse_picks_is_lenient_and_ignores_out_of_window_picks() -> None:
    rows, cols = [4, 5, 6], ["Date", "Opponent", "Chart-Positions\nUK"]
    text = 'Sure! {"rows": [5, "6", 99], "columns": ["opponent", "Nope", "Chart-Positions UK"]}'
    assert parse_picks(text, rows, cols) == {
        (5, "Opponent"),
        (6, "Opponent"),
        (5, "Chart-Positions\nUK"),
        (6, "Chart-Positions\nUK"),
    }
    assert parse_picks('{"cells": [[4, "Date"], [7, "Date"], [5, "x"]]}', rows, cols) == {
        (4, "Date")
    }
    assert parse_picks("rows: [4], columns: ['Date']", rows, cols) == {(4, "Date")}
    assert parse_picks('{"rows": [], "columns": []}', rows, cols) == set()
    assert parse_picks("I think the answer is Boston.", rows, cols) is None


def test_union_of_window_picks_then_fixed_point() -> None:
    df = pd.DataFrame(
        {
            "A": ["a0", "a1", "a2"],
            "B": ["b0", "b1", "b2"],
            "C": ["c0", "c1", "c2"],
            "D": ["d0", "d1", "d2"],
        }
    )
    # round 1: two windows (columns A-C, B-D); round 2: one 2x2 window that keeps itself
    model = ScriptedChatModel([pick([0], ["A"]), pick([2], ["D"]), pick([0, 2], ["A", "D"])])
    sub = pieta_filter("q", df, model, max_concurrency=1)
    assert (sub.rows, sub.columns, sub.fallback) == ([0, 2], ["A", "D"], False)
    assert sub.detail["fixed_point"] is True
    assert [r["windows"] for r in sub.detail["rounds"]] == [2, 1]
    window_prompts = [str(p[0].content).split("Now this piece.")[1] for p in model.prompts]
    assert (
        "| row | A | B | C |" in window_prompts[0] and "| 2 | b2 | c2 | d2 |" in window_prompts[1]
    )
    assert "| row | A | D |" in window_prompts[2] and "| 1 |" not in window_prompts[2]
    assert sub.input_tokens == sum(len(str(p[0].content).split()) for p in model.prompts)
    assert model.call_kwargs[0]["max_tokens"] == 80


def test_rounds_shrink_the_table_until_nothing_changes(seasons: pd.DataFrame) -> None:
    picker = WindowPicker(wanted=["Year", "League"], condition=("Year", "2003"))
    sub = pieta_filter("what league did the team play in during 2003?", seasons, picker)
    # round 1: windows without "Year" keep every League row; round 2 on 5x2 keeps 2003 only
    assert (sub.rows, sub.columns) == ([2], ["Year", "League"])
    assert [r["windows"] for r in sub.detail["rounds"]] == [9, 3, 1]
    assert [r["cells"] for r in sub.detail["rounds"]] == [10, 2, 2]
    assert sub.detail["fixed_point"] is True and len(picker.prompts) == 13


def test_max_rounds_stops_early(seasons: pd.DataFrame) -> None:
    picker = WindowPicker(wanted=["Year", "League"], condition=("Year", "2003"))
    sub = pieta_filter("q", seasons, picker, max_rounds=1)
    assert (sub.rows, sub.columns) == ([0, 1, 2, 3, 4], ["Year", "League"])
    assert sub.detail["fixed_point"] is False


def test_bad_json_falls_back_to_the_whole_table(seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(["The answer is USL A-League."] * 9)
    sub = pieta_filter("q", seasons, model, max_concurrency=1)
    assert sub.fallback and sub.reason == "no cell was picked (9 unreadable replies)"
    assert sub.rows == [0, 1, 2, 3, 4] and len(sub.columns) == 5


def test_failed_calls_do_not_raise(seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel([pick([0], ["Year"])])  # one reply for nine windows
    sub = pieta_filter("q", seasons, model, max_rounds=1, max_concurrency=1)
    assert (sub.rows, sub.columns) == ([0], ["Year"]) and sub.detail["rounds"][0]["unreadable"] == 8


def test_long_tables_are_capped_before_windows(
    seasons: pd.DataFrame, bag_of_words: Embeddings
) -> None:
    big = pd.concat([seasons] * 4, ignore_index=True)  # 20 rows x 5 columns = 100 cells
    picker = WindowPicker(wanted=["Year", "League"])
    sub = pieta_filter("q", big, picker, max_cells=20, max_rounds=1)
    assert sub.rows == [0, 1, 2, 3] and sub.detail["capped"] is True  # first 20 // 5 rows
    picker = WindowPicker(wanted=["Year", "League"])
    sub = pieta_filter(
        "the 2005 season", big, picker, max_cells=20, max_rounds=1, embeddings=bag_of_words
    )
    assert sub.rows == [4, 9, 14, 19]  # the rows most like the question, not the first ones


def test_window_budget_lengthens_the_stride(seasons: pd.DataFrame) -> None:
    big = pd.concat([seasons] * 4, ignore_index=True)  # 20 rows x 5 columns
    rows, cols = list(range(20)), [str(c) for c in big.columns]
    assert plan_grid(20, 5, 3, 1, None) == WindowGrid(3, 3, 1, 1)
    assert len(divide(rows, cols, WindowGrid(3, 3, 1, 1))) == 54
    assert plan_grid(20, 5, 3, 1, 54) == WindowGrid(3, 3, 1, 1)  # within budget: the paper's
    assert plan_grid(20, 5, 3, 1, 30) == WindowGrid(3, 3, 2, 2)  # 10 x 2 = 20 windows
    assert plan_grid(20, 5, 3, 1, 16) == WindowGrid(3, 3, 3, 3)  # 7 x 2 = 14 windows
    picker = WindowPicker(wanted=["Year", "League"])
    sub = pieta_filter("q", big, picker, max_windows=16, max_rounds=1)
    assert sub.detail["rounds"][0] == {
        "windows": 14,
        "window": [3, 3],
        "stride": 3,
        "unreadable": 0,
        "cells": 40,
    }
    assert len(picker.prompts) == 14
    # Every cell is still in some window: the picks cover every row.
    assert sub.rows == list(range(20)) and sub.columns == ["Year", "League"]


def test_rejects_bad_parameters(seasons: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="window"):
        pieta_filter("q", seasons, ScriptedChatModel([]), window=0)
    with pytest.raises(ValueError, match="max_windows"):
        pieta_filter("q", seasons, ScriptedChatModel([]), max_windows=0)


def test_max_windows_is_a_hard_cap_on_every_round(seasons: pd.DataFrame) -> None:
    # 60 x 5: at stride 3 (no overlap left) still 20 x 2 = 40 windows; the old stride-only
    # budget sent all 40 with max_windows=16 (WTQ rounds of up to 62 windows ran like this).
    big = pd.concat([seasons] * 12, ignore_index=True)
    picker = WindowPicker(wanted=["Year", "League"])
    sub = pieta_filter("q", big, picker, max_windows=16, max_rounds=1)
    assert len(picker.prompts) <= 16
    assert sub.detail["rounds"][0]["windows"] == len(picker.prompts) == 16
    assert sub.detail["rounds"][0]["window"] == [8, 3]  # taller windows, not unseen cells
    assert sub.rows == list(range(60)) and sub.columns == ["Year", "League"]


@pytest.mark.parametrize(
    ("n_rows", "n_cols", "budget"),
    [(60, 8, 16), (2000, 1, 16), (1, 2000, 16), (45, 44, 16), (100, 20, 1), (7, 7, 3)],
)
def test_every_grid_within_budget_covers_every_cell(n_rows: int, n_cols: int, budget: int) -> None:
    grid = plan_grid(n_rows, n_cols, 3, 1, budget)
    wins = divide(list(range(n_rows)), [str(c) for c in range(n_cols)], grid)
    assert len(wins) <= budget
    covered = {(r, c) for rows, cols in wins for r in rows for c in cols}
    assert len(covered) == n_rows * n_cols
