"""Yes/no questions: detected, asked for a yes/no query, and never answered by a bare value."""

from __future__ import annotations

import pandas as pd
import pytest
from fakes import ScriptedChatModel

from tablerag_agents.solve import ReadTableSolver, SQLSolver
from tablerag_agents.solve.process_df import ProcessDfSolver
from tablerag_agents.solve.question_kind import (
    asks_yes_no,
    for_question,
    misses_choice,
    yes_no_answer,
)

STATEMENT = (
    "Is the following statement true according to the table? Answer yes or no.\n"
    "Statement: the team played in the USL First Division in 2005"
)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (STATEMENT, True),
        ("did jim osborne win any titles on a grass court?", True),
        ("Has anyone scored 10 goals", True),
        ("true or false. the show featured more than 10 episodes in a season.", True),
        ("14-17 was published in 1836. was the previous one published before 1830?", True),
        ("was the winner italy or france?", False),
        ("is enping more/less dense than kaiping?", False),
        ("can you name a party other than the national unity party?", False),
        ("14-17 was published in 1836. when was the previous one published?", False),
        ("how many seasons were in the usl a-league?", False),
        ("", False),
    ],
)
def test_asks_yes_no(question: str, expected: bool) -> None:
    assert asks_yes_no(question) is expected


def test_yes_no_answer_follows_the_question_words() -> None:
    assert yes_no_answer(["Yes"]) == "yes"
    assert yes_no_answer(["yes", "YES."]) == "yes"
    assert yes_no_answer(["False"]) == "no"
    assert yes_no_answer(["no"], "true or false: it rained") == "false"
    assert yes_no_answer(["yes", "no"]) is None  # a mix is no verdict
    assert yes_no_answer(["1"]) is None  # a count is not a verdict
    assert yes_no_answer(["gubbio"]) is None
    assert yes_no_answer([]) is None


def test_sql_value_for_a_yes_no_question_is_asked_again(seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            '```sql\nSELECT "League" FROM t WHERE "Year" = \'2005\'\n```',
            "```sql\nSELECT CASE WHEN COUNT(*) > 0 THEN 'yes' ELSE 'no' END FROM t "
            "WHERE \"Year\" = '2005' AND \"League\" = 'USL First Division'\n```",
        ]
    )
    result = SQLSolver(model).solve(STATEMENT, seasons)
    assert result.error is None and result.answer_items == ["yes"]
    follow_up = model.prompts[1][-1].content
    assert "USL First Division" in follow_up and "'yes' or 'no'" in follow_up
    # The rule is in the system prompt from the first call on.
    assert "asks yes or no" in model.prompts[0][0].content


def test_sql_value_kept_for_a_yes_no_question_is_an_error(seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            '```sql\nSELECT "League" FROM t WHERE "Year" = \'2005\'\n```',
            '```sql\nSELECT "Year" FROM t WHERE "Year" = \'2005\'\n```',
        ]
    )
    result = SQLSolver(model, max_retries=1).solve(STATEMENT, seasons)
    assert not result.ok and "asks yes or no" in (result.error or "")
    # The yes/no request is made once, not repeated for every retry.
    assert sum("asks yes or no" in p[-1].content for p in model.prompts[1:]) == 1


def test_boolean_sql_result_is_a_verdict(seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(["```sql\nSELECT COUNT(*) > 4 FROM t\n```"])
    result = SQLSolver(model).solve("are there more than 4 seasons?", seasons)
    assert result.ok and result.answer_items == ["yes"]


def test_read_table_prompt_allows_a_yes_no_answer(seasons: pd.DataFrame) -> None:
    """The short-answer format line must not rule out yes/no (it once said "a number, a name")."""
    model = ScriptedChatModel(["Final Answer: Yes"])
    result = ReadTableSolver(model).solve(STATEMENT, seasons)
    assert "yes or no" in model.prompts[0][-1].content.splitlines()[-1]
    assert result.error is None and result.answer_items == ["yes"]


def test_value_questions_are_untouched(seasons: pd.DataFrame) -> None:
    """A value question answered "no" or "yes" keeps it; a name stays a name."""
    model = ScriptedChatModel(['```sql\nSELECT "League" FROM t WHERE "Year" = \'2005\'\n```'])
    result = SQLSolver(model).solve("which league in 2005?", seasons)
    assert result.ok and result.answer_items == ["USL First Division"]


def test_process_df_value_for_a_yes_no_question_is_repaired(sandbox, seasons) -> None:
    model = ScriptedChatModel(
        [
            "```python\ndef process_df(df):\n"
            "    return df.loc[df['Year'] == 2005, 'League'].iloc[0]\n```",
            "```python\ndef process_df(df):\n"
            "    rows = df[(df['Year'] == 2005) & (df['League'] == 'USL First Division')]\n"
            "    return 'yes' if len(rows) else 'no'\n```",
        ]
    )
    result = ProcessDfSolver(model, sandbox).solve(STATEMENT, seasons)
    assert result.ok and result.answer_items == ["yes"]
    assert "asks yes or no" in model.prompts[1][-1].content
    assert "asks yes or no" in model.prompts[0][0].content


def test_for_question_keeps_yes_no_lines_only_for_yes_no_questions() -> None:
    prompt = "Rules:\n- one\n[yes/no] - answer 'yes' or 'no'\n- two\n"
    assert for_question(prompt, STATEMENT) == "Rules:\n- one\n- answer 'yes' or 'no'\n- two\n"
    for question in ("are there more players from sweden or canada?", "how many goals?"):
        assert for_question(prompt, question) == "Rules:\n- one\n- two\n"


def test_a_choice_question_gets_no_yes_no_rule(sandbox, seasons) -> None:
    """ "X or Y?" resembles yes/no; told how to say yes, the small model answers "yes"."""
    choice = "were there more seasons in the usl first division or the a-league?"
    sql_model = ScriptedChatModel(['```sql\nSELECT "League" FROM t LIMIT 1\n```'])
    SQLSolver(sql_model).solve(choice, seasons)
    pandas_model = ScriptedChatModel(
        ["```python\ndef process_df(df):\n    return df['League'].iloc[0]\n```"]
    )
    ProcessDfSolver(pandas_model, sandbox).solve(choice, seasons)
    for model in (sql_model, pandas_model):
        system = model.prompts[0][0].content
        assert "yes or no" not in system and "[yes/no]" not in system


@pytest.mark.parametrize(
    ("question", "items", "missed"),
    [
        ("are more managers from costa rica or brazil?", ["no"], True),
        ("are more managers from costa rica or brazil?", ["Costa Rica"], False),
        ("did vietnam or south korea have more silver medals?", ["South Korea (KOR)"], False),
        ("was attendance higher during week 5 or week 9?", ["21458"], True),
        ("was attendance higher during week 5 or week 9?", ["5"], False),
        ("is the usa on the chart more or less than 7 times?", ["More"], False),
        ("did barcelona have more or less penalties than madrid?", ["15", "46"], True),
        ("did jim osborne win any titles on a grass court?", ["no"], False),  # yes/no
        ("which team won, italy or france?", ["7"], False),  # asks for a value
    ],
)
def test_misses_choice(question: str, items: list[str], missed: bool) -> None:
    assert misses_choice(question, items) is missed


def test_sql_yes_to_a_choice_question_is_asked_for_an_option(seasons: pd.DataFrame) -> None:
    question = "was the attendance higher in 2002 or 2003?"
    model = ScriptedChatModel(
        [
            "```sql\nSELECT CASE WHEN COUNT(*) > 0 THEN 'yes' ELSE 'no' END FROM t\n```",
            '```sql\nSELECT CASE WHEN (SELECT "Avg. Attendance" FROM t WHERE "Year" = \'2002\')'
            " > (SELECT \"Avg. Attendance\" FROM t WHERE \"Year\" = '2003') THEN '2002' "
            "ELSE '2003' END\n```",
        ]
    )
    result = SQLSolver(model).solve(question, seasons)
    assert result.ok and result.answer_items == ["2002"]
    assert "which of the options" in model.prompts[1][-1].content


def test_process_df_yes_to_a_choice_question_is_asked_for_an_option(sandbox, seasons) -> None:
    question = "was the league in 2005 the usl first division or the usl a-league?"
    model = ScriptedChatModel(
        [
            "```python\ndef process_df(df):\n    return 'yes'\n```",
            "```python\ndef process_df(df):\n"
            "    return df.loc[df['Year'] == 2005, 'League'].iloc[0]\n```",
        ]
    )
    result = ProcessDfSolver(model, sandbox).solve(question, seasons)
    assert result.ok and result.answer_items == ["USL First Division"]
    assert "which of the options" in model.prompts[1][-1].content
