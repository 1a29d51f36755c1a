"""Whether a question asks for a chart ("plot sales by month", "draw a bar chart of ...").

A request for a picture is answered with a chart (:mod:`tablerag_agents.solve.chart`),
not a value. The words alone are not enough: "chart", "graph" and "plot" are also
nouns of ordinary questions ("what was its highest chart position?", "did the song
make the charts?", "which plot is largest?"), so :func:`asks_for_chart` looks for a
request: a named chart type ("a bar chart", "a histogram"), a chart asked for "as a
chart" or "in a graph", a making verb with "a chart" or "a chart of" ("show me a
chart of the votes"), or a sentence that opens with a drawing verb and names what to
draw ("plot sales by month", "chart the top 5").
"""

from __future__ import annotations

import re

_NOUNS = frozenset(
    "chart charts graph graphs plot plots diagram diagrams histogram histograms "
    "visualization visualizations visualisation visualisations".split()
)
# Words that make a chart noun part of a name: "chart position", "plot area".
_COMPOUND_HEADS = frozenset(
    "position positions peak peaks debut debuts entry entries run runs history topper "
    "toppers appearance appearances area areas size sizes number numbers no twist twists "
    "line lines summary theory owner owners record records success hit hits".split()
)
_MAKING_VERBS = frozenset(
    "show make create draw give produce generate display render build plot sketch "
    "prepare want".split()
)
_ASKING_WORDS = frozenset({"a", "an", "me", "us"})
_OF_WORDS = frozenset(
    "of showing comparing displaying illustrating depicting visualizing visualising".split()
)
_KIND = re.compile(
    r"\b(?:bar|column|line|pie|scatter|area|stacked|donut|doughnut|box|bubble)\s*"
    r"(?:chart|graph|plot|diagram)s?\b(?!\s+(?:position|positions|peak)\b)"
    r"|\bhistograms?\b|\bheat\s*maps?\b|\bpie\s+of\b",
    re.I,
)
_AS_CHART = re.compile(
    r"\b(?:as|in|into)\s+(?:a|an)\s+(?:[a-z-]+\s+)?(?:chart|graph|plot|diagram)\b", re.I
)
_LEAD = frozenset("please now then also and so ok okay".split())
_DRAWING_VERBS = frozenset("plot chart graph visualize visualise draw sketch".split())
_OBJECT_START = frozenset(
    "the a an all each every my our their its this these those how top bottom total "
    "average mean number count share monthly yearly annual weekly daily".split()
)
_RELATIONS = frozenset("by over per against vs versus across".split())


def _sentences(text: str) -> list[list[str]]:
    """The text's sentences as lists of lower-case words."""
    parts = re.split(r"[.!?;:\n]+", text)
    return [words for p in parts if (words := re.findall(r"[a-z0-9'-]+", p.lower()))]


def _asks_to_make(words: list[str]) -> bool:
    """A making verb shortly before a chart noun that is not part of a name."""
    for i, word in enumerate(words):
        if word not in _NOUNS:
            continue
        after = words[i + 1] if i + 1 < len(words) else ""
        if after in _COMPOUND_HEADS:
            continue
        for j in range(max(0, i - 5), i):
            if words[j] in _MAKING_VERBS:
                between = set(words[j + 1 : i])
                if between & _ASKING_WORDS or after in _OF_WORDS:
                    return True
    return False


def _opens_with_drawing(words: list[str]) -> bool:
    """A sentence that opens with a drawing verb and names what to draw."""
    i = 0
    while i < len(words) and words[i] in _LEAD:
        i += 1
    if words[i : i + 2] in (["can", "you"], ["could", "you"], ["would", "you"], ["will", "you"]):
        i += 2
    if i < len(words) and words[i] == "please":
        i += 1
    if i >= len(words) or words[i] not in _DRAWING_VERBS:
        return False
    verb, rest = words[i], words[i + 1 :]
    if not rest or rest[0] in _COMPOUND_HEADS:
        return False  # "chart position of ...": a noun, not a request
    if verb.startswith("visuali") or verb == "plot":
        return True
    if verb in ("draw", "sketch"):  # "draw" is also a tied match: ask for a picture
        return bool(set(rest) & _NOUNS)
    return rest[0] in _OBJECT_START or rest[0].isdigit() or bool(set(rest) & _RELATIONS)


def asks_for_chart(question: str) -> bool:
    """True if ``question`` asks for a chart rather than a value.

    Examples that ask: "plot sales by month", "Chart the top 5 teams by points",
    "can you graph the population over time?", "draw a bar chart of goals per
    season", "show me a chart of the votes", "wins by year as a line graph".
    Examples that do not: "what was the highest chart position?", "did the single
    make the charts?", "which plot is the largest?", "how many draws did they have?".
    """
    if _KIND.search(question) or _AS_CHART.search(question):
        return True
    sentences = _sentences(question)
    return any(_asks_to_make(s) or _opens_with_drawing(s) for s in sentences)
