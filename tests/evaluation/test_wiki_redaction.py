"""drop_answer_sentences: Wu's rule that hides gold answers in Wikipedia background."""

from __future__ import annotations

import pytest

from tablerag_agents.clarify import split_sentences
from tablerag_agents.evaluation.wiki_redaction import drop_answer_sentences

INTRO = (
    "The Golden State Warriors won the 1975 NBA Finals. "
    "The arena held 1,234 fans. "
    "Tickets cost $12.50 each. "
    "Attendance fell by 12.5 percent. "
    "Rick Barry was named MVP."
)


@pytest.mark.parametrize(
    ("answers", "dropped"),
    [
        (["golden state warriors"], ["The Golden State Warriors won the 1975 NBA Finals."]),
        (["The Golden State Warriors"], ["The Golden State Warriors won the 1975 NBA Finals."]),
        (["1234"], ["The arena held 1,234 fans."]),
        (["1,234"], ["The arena held 1,234 fans."]),
        (["1234.0"], ["The arena held 1,234 fans."]),
        (["12.5"], ["Tickets cost $12.50 each.", "Attendance fell by 12.5 percent."]),
        (["12"], []),  # not part of 12.5, 12.50 or 1,234
        (
            ["Barry", "1975"],
            ["The Golden State Warriors won the 1975 NBA Finals.", "Rick Barry was named MVP."],
        ),
        (["Warrior"], []),  # whole words only
        (["", "  "], []),
    ],
)
def test_drop_answer_sentences(answers: list[str], dropped: list[str]) -> None:
    kept = [s for s in split_sentences(INTRO) if s not in dropped]
    assert drop_answer_sentences(INTRO, answers) == " ".join(kept)


def test_drop_answer_sentences_can_drop_everything() -> None:
    assert drop_answer_sentences("Barry won. Barry lost.", ["barry"]) == ""
