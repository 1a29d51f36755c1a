"""The WTQ denotation scorer: real WTQ-style answers, numbers, dates, lists as sets."""

from __future__ import annotations

import pytest

from tablerag_agents.evaluation.denotation import answers_match, split_answer


@pytest.mark.parametrize(
    ("pred", "gold", "ok"),
    [
        ("1234", ["1,234"], True),
        ("1234.0", ["1234"], True),
        ("1,234", ["1234.0"], True),
        ("12467", ["12,467"], True),
        ("2004", ["2004"], True),
        ("2004.0", ["2004"], True),
        ("2005", ["2004"], False),
        ("2.4", ["2"], False),
        ("3.3333333", ["3.33"], True),
        ("3.34", ["3.33"], False),
        ("the wolfe tones", ["Wolfe Tones"], True),
        ("Bangkok, Thailand", ["Bangkok, Thailand"], True),
        ("Bangkok", ["Bangkok, Thailand"], False),
        ("javier diaz", ["Javier Díaz"], True),
        ("1979-01-06", ["January 6, 1979"], True),
        ("6 January 1979", ["January 6, 1979"], True),
        ("January 7, 1979", ["January 6, 1979"], False),
        ("2-1", ["2 - 1"], True),
        ("two", ["2"], True),
        ("3 times", ["3"], False),
        ("yes", ["Yes"], True),
        ("no", ["yes"], False),
        ("", ["yes"], False),
        (
            "Clemson, Colorado State, Connecticut",
            ["Clemson", "Colorado State", "Connecticut"],
            True,
        ),
        ("Connecticut|Clemson|Colorado State", ["Clemson", "Colorado State", "Connecticut"], True),
        ("Clemson and Colorado State", ["Clemson", "Colorado State"], True),
        ("Clemson, Colorado State", ["Clemson", "Colorado State", "Connecticut"], False),
        ("Clemson", ["Clemson", "Colorado State"], False),
    ],
)
def test_answers_match_strings(pred: str, gold: list[str], ok: bool) -> None:
    assert answers_match(pred, gold) is ok


def test_answers_match_lists_are_sets() -> None:
    gold = ["Clemson", "Colorado State", "Connecticut"]
    assert answers_match(["connecticut", "clemson", "Colorado State"], gold)
    assert answers_match(["Clemson", "Clemson", "Colorado State", "Connecticut"], gold)
    assert not answers_match(["Clemson", "Colorado State", "Connecticut", "Duke"], gold)
    assert answers_match([3, 4.0], ["4", "3"])
    assert not answers_match([3, 5], ["4", "3"])
    assert not answers_match([], ["4"])
    assert not answers_match("x", [])


def test_split_answer_keeps_thousands_together() -> None:
    assert split_answer("1,234, 5,678 and 9") == ["1,234", "5,678", "9"]
    assert split_answer("a | b;c") == ["a", "b", "c"]
