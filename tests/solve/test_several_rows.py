"""The SQL solver's ``several_rows`` retry: an answer of several items asks once if one was
meant."""

from __future__ import annotations

from fakes import ScriptedChatModel, sql_reply
from wtq_rows import seasons_frame

from tablerag_agents.solve.sql import SQLSolver

QUESTION = "which league did the team play in during 2005?"
ALL_LEAGUES = 'SELECT DISTINCT "League" FROM t'
ONE_LEAGUE = 'SELECT "League" FROM t WHERE "Year" = 2005'


def test_several_items_get_one_retry_that_can_narrow_them() -> None:
    model = ScriptedChatModel([sql_reply(ALL_LEAGUES), sql_reply(ONE_LEAGUE)])
    result = SQLSolver(model, several_rows=True).solve(QUESTION, seasons_frame())
    assert result.answer_items == ["USL First Division"] and model.remaining == 0
    retry = model.prompts[1][-1].content
    assert retry.startswith("That query returned 2 rows:") and "USL A-League" in retry
    # Off (the default), the two leagues are the answer.
    model = ScriptedChatModel([sql_reply(ALL_LEAGUES)])
    result = SQLSolver(model).solve(QUESTION, seasons_frame())
    assert sorted(result.answer_items) == ["USL A-League", "USL First Division"]


def test_repeating_the_query_keeps_every_item() -> None:
    question = "which leagues did the team play in?"
    model = ScriptedChatModel([sql_reply(ALL_LEAGUES), sql_reply(ALL_LEAGUES)])
    result = SQLSolver(model, several_rows=True).solve(question, seasons_frame())
    assert sorted(result.answer_items) == ["USL A-League", "USL First Division"]
    assert model.remaining == 0


def test_it_asks_only_once() -> None:
    two_years = 'SELECT "Year" FROM t WHERE "League" = \'USL A-League\' LIMIT 2'
    model = ScriptedChatModel([sql_reply(ALL_LEAGUES), sql_reply(two_years)])
    result = SQLSolver(model, several_rows=True).solve(QUESTION, seasons_frame())
    assert result.answer_items == ["2001", "2002"] and model.remaining == 0


def test_a_narrowed_query_that_finds_nothing_keeps_the_rows() -> None:
    nothing = 'SELECT "League" FROM t WHERE "Year" = 1999'
    model = ScriptedChatModel([sql_reply(ALL_LEAGUES), sql_reply(nothing), sql_reply(nothing)])
    result = SQLSolver(model, several_rows=True).solve(QUESTION, seasons_frame())
    assert sorted(result.answer_items) == ["USL A-League", "USL First Division"]
