"""A question that asks for a plot gets a chart from the graph (scripted model, real sandbox)."""

from __future__ import annotations

import base64

import pytest
from fakes import BagOfWordsEmbeddings, ScriptedChatModel, sql_reply
from graph_runs import run_graph
from tablerag_agents.graphs import Context, GraphAnswer, TableQAResult, build_graph

from tablerag_agents.resources import Resources
from tablerag_agents.solve.chart_image import PNG_SIGNATURE

QUESTION = "plot the average attendance by year"
CHART = (
    "```python\ndef make_chart(df):\n    import matplotlib.pyplot as plt\n"
    "    data = df[['Year', 'Avg. Attendance']]\n"
    "    fig, ax = plt.subplots(figsize=(6, 4))\n"
    "    ax.plot(data['Year'], data['Avg. Attendance'])\n"
    "    ax.set_title('Attendance by year')\n"
    "    return data\n```"
)


def _ask(seasons_table, sandbox, replies, question, ctx):  # noqa: ANN001, ANN202
    model = ScriptedChatModel(replies)
    with Resources(chat_model=model, embeddings=BagOfWordsEmbeddings(), sandbox=sandbox) as res:
        res.add_table(seasons_table)
        ran, out = run_graph(build_graph(res), {"question": question, "tables": ["seasons"]}, ctx)
    return model, ran, out


@pytest.mark.sandbox
def test_a_chart_question_is_answered_with_a_chart(seasons_table, sandbox) -> None:  # noqa: ANN001
    model, ran, out = _ask(seasons_table, sandbox, [CHART], QUESTION, Context())
    assert ran == ["prepare", "solve", "answer"] and model.remaining == 0
    answer = TableQAResult.from_output(out).answer
    assert answer.solver == "chart" and not answer.abstained and answer.error is None
    assert answer.text == "Chart: Attendance by year"
    chart = answer.chart
    assert chart is not None and (chart.width, chart.height) == (600, 400)
    assert base64.b64decode(chart.png_base64).startswith(PNG_SIGNATURE)
    assert chart.data is not None and chart.data.columns == ["Year", "Avg. Attendance"]
    assert chart.data.rows[0] == [2001, 7169]  # the numbers the chart plots
    # The reply message carries the same answer (what the server sends).
    message_answer = GraphAnswer.from_message(out["messages"][-1])
    assert message_answer is not None and message_answer.chart == chart
    assert out["messages"][-1].content == answer.sentence


@pytest.mark.sandbox
def test_a_failed_chart_is_a_clear_error_and_no_other_solver_runs(
    seasons_table,  # noqa: ANN001
    sandbox,  # noqa: ANN001
) -> None:
    bad = CHART.replace("'Avg. Attendance'", "'Crowd'")
    model, ran, out = _ask(seasons_table, sandbox, [bad, bad], QUESTION, Context())
    assert ran == ["prepare", "solve", "answer"] and model.remaining == 0
    answer = TableQAResult.from_output(out).answer
    assert answer.abstained and answer.chart is None and answer.solver == "chart"
    assert answer.error is not None and answer.error.startswith("the chart could not be drawn:")
    assert "KeyError" in answer.error and "Crowd" in answer.error


def test_other_questions_and_charts_off_keep_the_solvers(seasons_table) -> None:  # noqa: ANN001
    first = sql_reply('SELECT MIN("Year") FROM t')
    for question, ctx in [("which year was first?", Context()), (QUESTION, Context(charts=False))]:
        model = ScriptedChatModel([first])
        with Resources(chat_model=model, embeddings=BagOfWordsEmbeddings()) as res:
            res.add_table(seasons_table)
            ran, out = run_graph(
                build_graph(res), {"question": question, "tables": ["seasons"]}, ctx
            )
        answer = TableQAResult.from_output(out).answer
        assert answer.solver == "sql" and answer.text == "2001" and answer.chart is None
        assert "make_chart" not in str(model.prompts[0])
