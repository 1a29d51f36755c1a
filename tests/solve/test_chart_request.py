"""Which questions ask for a chart: requests to draw, never nouns of ordinary questions."""

from __future__ import annotations

import pytest

from tablerag_agents.solve.chart_request import asks_for_chart

ASKS = [
    "plot sales by month",
    "Plot attendance",
    "Chart the top 5",
    "chart the top 5 teams by points",
    "draw a bar chart of goals per season",
    "Can you graph the population over time?",
    "Could you please chart how the rank changed?",
    "show me a pie chart of the votes",
    "wins by year as a line graph",
    "Please plot the attendance of each game.",
    "Make a chart of the medals per country",
    "I want a graph of points per season",
    "visualize the distribution of ages",
    "histogram of the scores",
    "Give me a plot showing revenue against cost",
    "show the results in a chart",
    "Create a scatter plot of height vs weight",
    "draw a graph of the wins",
    "Show me a chart.",
    "What is the average? Also plot it by year.",
]
ASKS_NOT = [
    "what was the highest chart position?",
    "did the single make the charts?",
    "which album made the chart in 1999?",
    "did the song make the chart by 1999?",
    "chart position of the single in 1999?",
    "which single had the most chart runs?",
    "which song peaked highest on a chart",
    "how many weeks on the chart",
    "how many songs were on the billboard hot 100 chart?",
    "how many singles did the band need to chart?",
    "what was the first single to chart in the uk?",
    "which song charted highest?",
    "which plot is the largest?",
    "what is the plot area of lot 5?",
    "the film's plot revolves around what?",
    "how many draws did they have?",
    "Draw results for team X?",
    "who owns the graph?",
    "who is the first away team on the chart",
    "what is the total number of draws",
]


@pytest.mark.parametrize("question", ASKS)
def test_requests_for_a_picture_ask_for_a_chart(question: str) -> None:
    assert asks_for_chart(question)


@pytest.mark.parametrize("question", ASKS_NOT)
def test_chart_words_as_nouns_do_not(question: str) -> None:
    assert not asks_for_chart(question)
