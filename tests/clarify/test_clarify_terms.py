"""Term clarifier: prompt, lenient parsing, only terms that occur, never a crash."""

from __future__ import annotations

import pytest
from fakes import ScriptedChatModel

from tablerag_agents.clarify import Clarification, clarify_terms, parse_explanations

QUESTION = "Which club had the most pts in the WRU league?"
HEADERS = ["Club", "Pld", "Pts", "Try bonus"]


def test_keeps_only_terms_in_the_question_headers_or_caption() -> None:
    reply = (
        '{"explanations": {"pld": "Matches played.", "Pts": "League points.", '
        '"WRU": "Welsh Rugby Union.", "East": "A region.", "tries for": "Tries scored.", '
        '"Pontypool": "The club with the most points."}}'
    )
    model = ScriptedChatModel([reply])
    result = clarify_terms(QUESTION, HEADERS, model, caption="WRU Division One East")
    # Spelled as in the headers; "East" is in the caption; "tries for" and the
    # (answer-like) "Pontypool" appear nowhere.
    assert result.terms == {
        "Pld": "Matches played.",
        "Pts": "League points.",
        "WRU": "Welsh Rugby Union.",
        "East": "A region.",
    }
    assert result.text.splitlines() == [
        "Pld: Matches played.",
        "Pts: League points.",
        "WRU: Welsh Rugby Union.",
        "East: A region.",
    ]
    prompt = model.prompts[0][0].content
    assert "Question: Which club had the most pts in the WRU league?" in prompt
    assert "Columns: Club, Pld, Pts, Try bonus" in prompt
    assert "Caption: WRU Division One East" in prompt
    assert result.input_tokens > 0 and result.output_tokens > 0 and result.seconds >= 0


def test_terms_must_be_whole_words_and_not_the_whole_question() -> None:
    reply = (
        '{"explanations": {"Pt": "A part of pts.", "try  BONUS": "A bonus point for tries.", '
        '"which club had the most pts in the WRU league": "The question."}}'
    )
    result = clarify_terms(QUESTION, HEADERS, ScriptedChatModel([reply]))
    assert result.terms == {"Try bonus": "A bonus point for tries."}


def test_titles_in_quotes_and_explanations_with_new_numbers_are_dropped() -> None:
    # Seen with the embedded 1.5B model: invented facts about song titles, with years.
    question = 'which year was "try not to think" and "bleach" released?'
    headers = ["Single/EP", "Release date", "UK Singles Chart Position"]
    reply = (
        '{"explanations": {"try not to think": "A song.", "Bleach": "A song.", '
        '"Single/EP": "A single or an extended play record.", '
        '"release date": "The day the record came out, e.g. in 1968.", '
        '"UK Singles Chart Position": "The highest place it reached in the UK chart."}}'
    )
    result = clarify_terms(question, headers, ScriptedChatModel([reply]))
    assert result.terms == {
        "Single/EP": "A single or an extended play record.",
        "UK Singles Chart Position": "The highest place it reached in the UK chart.",
    }
    # A number the question already holds is fine.
    reply = '{"20 metre club": "Athletes who threw the shot put 20 metres or more."}'
    result = clarify_terms("who joined the 20 metre club?", ["Name"], ScriptedChatModel([reply]))
    assert list(result.terms) == ["20 metre club"]


@pytest.mark.parametrize(
    "reply",
    [
        'Sure! Here you go:\n```json\n{"explanations": {"Pld": "Played."}}\n```\nHope it helps.',
        '{"explanations": {"Pld": "Played."}} The question asks for the club.',
        '{"Pld": "Played."}',
        '[{"term": "Pld", "explanation": "Played."}]',
        'Explanations:\n"Pld": "Played.",\n',
        '{"explanations": {"Pld": "Played.",}',  # trailing comma, missing brace
    ],
    ids=["fenced", "trailing-text", "flat", "list", "seed-lines", "broken-json"],
)
def test_lenient_parsing(reply: str) -> None:
    result = clarify_terms(QUESTION, HEADERS, ScriptedChatModel([reply]))
    assert result.terms == {"Pld": "Played."}


@pytest.mark.parametrize(
    "reply",
    ["I cannot help with that.", "", "```json\n{not json at all\n```", '{"explanations": 3}'],
)
def test_unparsable_reply_gives_an_empty_clarification(reply: str) -> None:
    result = clarify_terms(QUESTION, HEADERS, ScriptedChatModel([reply]))
    assert result.terms == {}
    assert result.text == ""


def test_empty_object_means_nothing_to_explain() -> None:
    result = clarify_terms(QUESTION, HEADERS, ScriptedChatModel(['{"explanations": {}}']))
    assert result == Clarification(
        input_tokens=result.input_tokens, output_tokens=result.output_tokens, seconds=result.seconds
    )


def test_limits_number_and_length_of_explanations() -> None:
    reply = '{"Club": "' + "x" * 300 + '", "Pld": "Played.", "Pts": "Points."}'
    result = clarify_terms(
        QUESTION, HEADERS, ScriptedChatModel([reply]), max_terms=2, max_explanation_chars=20
    )
    assert result.terms == {"Club": "x" * 19 + "…", "Pld": "Played."}


def test_nothing_to_clarify_makes_no_call() -> None:
    model = ScriptedChatModel([])
    assert clarify_terms("  ", [], model) == Clarification()
    assert model.prompts == []


def test_parse_explanations_ignores_non_text_values() -> None:
    assert parse_explanations('{"explanations": {"a": "b", "c": 1, "d": {"e": "f"}}}') == {"a": "b"}
