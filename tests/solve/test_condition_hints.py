"""Hints about the text conditions that emptied a query, and the SQL example over the table."""

from __future__ import annotations

import pandas as pd
from fakes import ScriptedChatModel, sql_reply

from tablerag_agents.solve.condition_hints import condition_hints
from tablerag_agents.solve.sql import SQLSolver
from tablerag_agents.solve.table_example import example_block, sql_example

# Cells of WTQ tables (ESPY award winners; a thrower's results).
ESPY = pd.DataFrame(
    {
        "Year": ["2006", "2007", "2008", "2009", "2010"],
        "Driver": [
            "Tony Stewart",
            "Jeff Gordon",
            "Jimmie Johnson",
            "Jimmie Johnson",
            "Jimmie Johnson",
        ],
        "Racing series": ["NASCAR", "NASCAR", "NASCAR", "NASCAR", "Formula One"],
    }
)
THROWS = pd.DataFrame(
    {
        "Year": ["1992", "1992", "1999", "2005"],
        "Competition": [
            "CARIFTA Games (U20)",
            "CARIFTA Games (U20)",
            "Central American and Caribbean Championships",
            "Central American and Caribbean Championships",
        ],
        "Position": ["1st", "3rd", "2nd", "1st"],
        "Event": ["Discus throw", "Javelin throw", "Javelin throw", "Javelin throw"],
    }
)


def test_a_value_no_cell_of_its_column_has_is_named_with_the_columns_values() -> None:
    sql = (
        "SELECT COUNT(*) FROM t WHERE \"Driver\" = 'Jimmie Johnson' "
        "AND \"Racing series\" = 'ESPY Awards'"
    )
    hint = condition_hints(sql, {"t": ESPY}, "jimmy johnson won how many consecutive espy awards?")
    assert hint is not None
    assert "no cell of \"Racing series\" is 'ESPY Awards'" in hint
    assert "'NASCAR', 'Formula One'" in hint  # most frequent first
    assert "Jimmie Johnson" not in hint  # a condition cells meet is not named


def test_a_condition_the_question_never_mentions_is_named() -> None:
    sql = (
        "SELECT COUNT(*) FROM t WHERE \"Competition\" = 'CARIFTA Games (U20)' "
        "AND \"Event\" = 'Javelin throw' AND \"Position\" = '1st'"
    )
    question = "how many times did the competitor finish first in the javelin throw?"
    hint = condition_hints(sql, {"t": THROWS}, question)
    assert hint is not None
    assert "does not mention 'CARIFTA Games (U20)'" in hint
    # 'Javelin throw' is asked for, and '1st' is the question's "first".
    assert "Javelin" not in hint and "'1st'" not in hint


def test_no_hint_when_every_condition_is_met_and_asked_for() -> None:
    sql = "SELECT COUNT(*) FROM t WHERE \"Event\" ILIKE '%javelin%' AND \"Position\" = '1st'"
    assert condition_hints(sql, {"t": THROWS}, "how many javelin wins (1st)?") is None
    assert condition_hints("SELECT COUNT(*) FROM t", {"t": THROWS}, "how many?") is None
    # A column no table has is the error message's business, not a hint's.
    assert condition_hints("SELECT 1 FROM t WHERE \"Nope\" = 'x'", {"t": THROWS}, "x?") is None


def test_a_like_pattern_no_cell_matches_is_named() -> None:
    sql = "SELECT COUNT(*) FROM t WHERE \"Event\" LIKE '%hammer%'"
    hint = condition_hints(sql, {"t": THROWS}, "how many hammer throws?")
    assert hint is not None and "no cell of \"Event\" is '%hammer%'" in hint


def _zero_then_fixed() -> ScriptedChatModel:
    return ScriptedChatModel(
        [
            sql_reply(
                "SELECT COUNT(*) FROM t WHERE \"Driver\" = 'Jimmie Johnson' "
                "AND \"Racing series\" = 'ESPY Awards'"
            ),
            sql_reply("SELECT COUNT(*) FROM t WHERE \"Driver\" = 'Jimmie Johnson'"),
        ]
    )


def test_sql_solver_retries_a_zero_with_the_condition_hint_when_switched_on() -> None:
    question = "jimmy johnson won how many espy awards?"
    model = _zero_then_fixed()
    result = SQLSolver(model, filter_hints=True).solve(question, ESPY)
    assert result.answer_items == ["3"] and model.remaining == 0
    retry = model.prompts[1][-1].content
    assert "no cell of \"Racing series\" is 'ESPY Awards'" in retry
    # Off (the default), the 0 that no resembling literal explains is kept.
    model = _zero_then_fixed()
    result = SQLSolver(model).solve(question, ESPY)
    assert result.answer_items == ["0"] and model.remaining == 1


def test_example_is_written_over_the_tables_own_columns() -> None:
    albums = pd.DataFrame(
        {
            "Year": [1989, 1991, 1994],
            "Album": ["Good Deeds and Dirty Rags", "Hammer and Tongs", "Five"],
            "Territory": ["UK", "UK", "UK"],
        }
    )
    assert sql_example(albums) == (
        "which album has the highest year?",
        'SELECT "Album" FROM t ORDER BY "Year" DESC LIMIT 1',
    )
    # A parsed companion is sorted on; the column it parses is not a name column.
    typed = albums.assign(Rank=["12th", "7th", "1st"], Rank__num=[12, 7, 1]).drop(columns="Year")
    assert sql_example(typed) == (
        "which album has the highest rank?",
        'SELECT "Album" FROM t ORDER BY "Rank__num" DESC LIMIT 1',
    )
    # No number: count the rows holding the column's most frequent value.
    text = albums.drop(columns="Year")
    assert sql_example(text) == (
        "how many rows have territory UK?",
        "SELECT COUNT(*) FROM t WHERE \"Territory\" = 'UK'",
    )
    assert sql_example(pd.DataFrame({"n": [1, 2]})) is None
    assert example_block(pd.DataFrame({"n": [1, 2]})) is None


def test_sql_solver_prompt_example_follows_the_switch() -> None:
    albums = pd.DataFrame({"Year": ["1989", "1991"], "Album": ["Good Deeds", "Hammer and Tongs"]})
    question = "which album came first?"
    model = ScriptedChatModel([sql_reply('SELECT "Album" FROM t ORDER BY "Year" LIMIT 1')])
    SQLSolver(model, table_example=True).solve(question, albums)
    system = model.prompts[0][0].content
    assert 'SELECT "Album" FROM t ORDER BY "Year" DESC LIMIT 1' in system
    assert "Visitors" not in system and system.count("Example") == 1
    assert "Reply with one SELECT query" in system  # the rules are kept
    model = ScriptedChatModel([sql_reply('SELECT "Album" FROM t ORDER BY "Year" LIMIT 1')])
    SQLSolver(model).solve(question, albums)
    assert "Visitors" in model.prompts[0][0].content  # the fixed example by default
