"""What shape of answer a question asks for: yes/no questions and their answers.

A question such as "did Italy win more medals than France?" or "Is the
statement true? Answer yes or no." must be answered yes or no, yet small
models writing SQL or pandas code tend to return the cell the question talks
about ("Italy"). Solvers use :func:`asks_yes_no` to ask for a yes/no query and
:func:`yes_no_answer` to tell whether what they got is one (:func:`misses_yes_no`
when it is not), and :func:`for_question` to keep the yes/no rules of a prompt
for the questions that ask yes or no.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_AUXILIARIES = frozenset(
    "is are was were am do does did has have had".split()
    + "can could will would should shall may might must".split()
)
_SAYS_YES_NO = re.compile(r"\b(?:yes\s*(?:or|/)\s*no|no\s*(?:or|/)\s*yes)\b", re.I)
_SAYS_TRUE_FALSE = re.compile(r"\b(?:true\s*(?:or|/)\s*false|false\s*(?:or|/)\s*true)\b", re.I)
_CHOICE = re.compile(
    r"\bor\b|\b(?:more|less|fewer|higher|lower|greater|smaller|before|after|better|worse)\s*/\s*\w",
    re.I,
)
_REQUEST = frozenset({"you"})  # "can you name...", "could you find..." ask for a value
_YES = frozenset({"yes", "true"})
_NO = frozenset({"no", "false"})


def _last_question(text: str) -> str:
    """The last sentence that ends with "?" (the whole text if none does)."""
    asked = [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s.endswith("?")]
    return asked[-1] if asked else text.strip()


def _opening(question: str) -> tuple[str, list[str]]:
    """The question sentence of ``question`` and its words, lower-cased."""
    text = _last_question(question)
    return text, re.findall(r"[a-z0-9']+", text.lower())


def asks_yes_no(question: str) -> bool:
    """True if ``question`` is answered by yes or no (or true or false).

    Either it says so ("answer yes or no", "true or false"), or its question
    sentence opens with an auxiliary verb ("is", "did", "has"...) and offers no
    alternatives: "was the winner Italy or France?" and "more/less?" ask for a
    choice, "can you name...?" for a value.
    """
    if _SAYS_YES_NO.search(question) or _SAYS_TRUE_FALSE.search(question):
        return True
    text, words = _opening(question)
    if not words or words[0] not in _AUXILIARIES or _CHOICE.search(text):
        return False
    return not (len(words) > 1 and words[1] in _REQUEST)


def yes_no_answer(items: Sequence[str], question: str = "") -> str | None:
    """The yes/no verdict of ``items``, or None if they are not one.

    Several items that all say the same ("yes", "Yes") count as one; a count
    or a name is not a yes/no answer, and neither is a mix of yes and no. The
    verdict is written "true"/"false" when ``question`` asks "true or false"
    (and not "yes or no"), else "yes"/"no".
    """
    words = {re.sub(r"[^a-z]", "", str(i).lower()) for i in items if str(i).strip()}
    if not words or not (words <= _YES or words <= _NO):
        return None
    true_false = bool(_SAYS_TRUE_FALSE.search(question)) and not _SAYS_YES_NO.search(question)
    if words <= _YES:
        return "true" if true_false else "yes"
    return "false" if true_false else "no"


def asks_choice(question: str) -> bool:
    """True if ``question`` opens like a yes/no question but offers options to pick from.

    "was the winner italy or france?", "is it more or less than 7?", "did he
    air before or after X?": the answer is one of the options, never yes or no.
    """
    text, words = _opening(question)
    return (
        bool(words)
        and words[0] in _AUXILIARIES
        and bool(_CHOICE.search(text))
        and not asks_yes_no(question)
    )


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def misses_choice(question: str, items: Sequence[str]) -> bool:
    """True if ``question`` asks to pick one of the options it names and ``items`` are not one.

    An answer is taken as an option when it is one item whose words (a trailing
    note in brackets aside: "South Korea (KOR)") all appear in the question; a
    yes, a count of something else or two compared values are not.
    """
    if not asks_choice(question):
        return False
    if len(items) != 1:
        return True
    words = _words(re.sub(r"\([^)]*\)", " ", str(items[0])))
    return not words or not set(words) <= set(_words(question))


def misses_yes_no(question: str, items: Sequence[str]) -> bool:
    """True if ``question`` asks yes or no and ``items`` are something else (a name, a count)."""
    return asks_yes_no(question) and yes_no_answer(items) is None


def missed_kind(question: str, items: Sequence[str]) -> str | None:
    """The shape of answer ``question`` asks for and ``items`` miss: ``"yes_no"``,
    ``"choice"`` (:func:`misses_choice`), or None when they fit (solvers name their
    follow-up prompts after it: ``sql_yes_no``, ``process_df_choice``...)."""
    if misses_yes_no(question, items):
        return "yes_no"
    return "choice" if misses_choice(question, items) else None


YES_NO_ONLY = "[yes/no] "
"""Opens a prompt line meant only for yes/no questions (see :func:`for_question`)."""


def for_question(prompt: str, question: str) -> str:
    """``prompt`` fitted to ``question``: its :data:`YES_NO_ONLY` lines kept only for a yes/no one.

    A rule such as "if the question asks yes or no, return 'yes' or 'no'" costs
    a small model the choice questions it resembles ("are there more players
    from sweden or canada?" answered "yes"), so it is shown only when
    :func:`asks_yes_no` says the question needs it. Kept lines lose the mark.
    """
    keep = asks_yes_no(question)
    lines = []
    for line in prompt.splitlines(keepends=True):
        if line.startswith(YES_NO_ONLY):
            if keep:
                lines.append(line[len(YES_NO_ONLY) :])
        else:
            lines.append(line)
    return "".join(lines)
