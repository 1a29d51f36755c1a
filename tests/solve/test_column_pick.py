"""Picking the question's columns before the query is written (SQL solver ``pick_columns``)."""

from __future__ import annotations

import pandas as pd
from fakes import ScriptedChatModel, sql_reply
from wtq_rows import seasons_frame

from tablerag_agents.solve.column_pick import narrow, parse_picked, pick_candidates, pick_prompt
from tablerag_agents.solve.sql import SQLSolver
from tablerag_agents.tables.typed_table import build_typed_table

QUESTION = "what was the average attendance in 2003?"


def test_parse_picked_matches_names_in_any_form_longest_first() -> None:
    candidates = ["Year", "Year of birth", "Avg. Attendance", "League"]
    reply = '- "Avg. Attendance"\n- year OF   birth\nThese are needed.'
    assert parse_picked(reply, candidates) == ["Year of birth", "Avg. Attendance"]
    assert parse_picked("Year\nLeague", candidates) == ["Year", "League"]
    assert parse_picked("the attendance column", candidates) == []


def test_pick_prompt_lists_every_column_with_values() -> None:
    frame = seasons_frame()
    text = pick_prompt(frame, pick_candidates(frame), QUESTION)
    assert '"Avg. Attendance": 7,169, 6,260, 5,871' in text
    assert '"League": USL A-League, USL First Division' in text
    assert text.rstrip().endswith("one per line.") and QUESTION in text


def test_narrow_keeps_companions_and_row_numbers_of_picked_columns() -> None:
    view = build_typed_table(seasons_frame(), row_numbers=True)
    frame = view.frame
    assert view.companions["Avg. Attendance__num"] == "Avg. Attendance"
    assert pick_candidates(frame, view) == [str(c) for c in seasons_frame().columns]
    shown = narrow(frame, ["Year", "Avg. Attendance"], view)
    assert "League" not in shown.columns
    assert {"Year", "Avg. Attendance", "Avg. Attendance__num", "row_no"} <= set(shown.columns)
    assert narrow(frame, [], view) is frame  # nothing named: the table stays whole


def test_sql_solver_shows_only_the_picked_columns_but_queries_them_all() -> None:
    model = ScriptedChatModel(
        [
            '"Year"\n"Avg. Attendance"',
            # The query also names a column the prompt left out: the database has it.
            sql_reply(
                'SELECT "Avg. Attendance" FROM t WHERE "Year" = 2003 '
                "AND \"League\" = 'USL A-League'"
            ),
        ]
    )
    result = SQLSolver(model, pick_columns=True).solve(QUESTION, seasons_frame())
    assert result.answer_items == ["5871"]
    query_prompt = model.prompts[1][-1].content
    assert '"Avg. Attendance"' in query_prompt and '"League"' not in query_prompt
    assert "USL A-League" not in query_prompt  # the League cells are not shown either
    assert "columns picked" in result.trace[0].thought
    # Off (the default), one call: the query prompt shows every column.
    model = ScriptedChatModel([sql_reply('SELECT "Avg. Attendance" FROM t WHERE "Year" = 2003')])
    SQLSolver(model).solve(QUESTION, seasons_frame())
    assert '"League"' in model.prompts[0][-1].content and model.remaining == 0


def test_a_reply_naming_no_column_leaves_the_table_whole() -> None:
    model = ScriptedChatModel(
        ["the attendance", sql_reply('SELECT "Avg. Attendance" FROM t WHERE "Year" = 2003')]
    )
    SQLSolver(model, pick_columns=True).solve(QUESTION, seasons_frame())
    assert '"League"' in model.prompts[1][-1].content


def test_narrow_tables_skip_the_picking_call() -> None:
    frame = pd.DataFrame({"Year": ["2001", "2002"], "Team": ["A", "B"]})
    model = ScriptedChatModel([sql_reply('SELECT "Team" FROM t WHERE "Year" = 2002')])
    result = SQLSolver(model, pick_columns=True).solve("which team played in 2002?", frame)
    assert result.answer_items == ["B"] and len(model.prompts) == 1
