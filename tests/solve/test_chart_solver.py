"""The chart solver with the scripted model and the real sandbox (needs bubblewrap)."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from fakes import ScriptedChatModel
from PIL import Image

from tablerag_agents.solve.chart import ChartSolver
from tablerag_agents.solve.chart_image import PNG_SIGNATURE, ChartLimits

pytestmark = pytest.mark.sandbox

SALES = pd.DataFrame(
    {"Month": ["Jan", "Feb", "Mar", "Apr", "May"], "Sales": ["10", "20", "15", "30", "5"]}
)


def chart_reply(body: str, figsize: str = "(8, 5)") -> str:
    """A model reply defining make_chart: ``body`` computes ``data``, then a bar chart."""
    return (
        "```python\ndef make_chart(df):\n    import matplotlib.pyplot as plt\n"
        f"    {body}\n"
        f"    fig, ax = plt.subplots(figsize={figsize})\n"
        "    ax.bar(data['Month'], data['Sales'])\n"
        "    ax.set_title('Sales by month')\n"
        "    return data\n```"
    )


def test_a_chart_question_gives_a_png_and_the_data_behind_it(sandbox) -> None:  # noqa: ANN001
    # show/savefig/close are what small models write: they must not lose the figure.
    body = "data = df.nlargest(3, 'Sales')\n    plt.show(); plt.savefig('x.png'); plt.close()"
    model = ScriptedChatModel(
        [chart_reply(body).replace("    return data", "    plt.show()\n    return data")]
    )
    result = ChartSolver(model, sandbox).solve("chart the top 3 months by sales", SALES)
    assert result.ok and result.error is None, result.error
    chart = result.chart
    assert chart is not None
    png = chart.png_bytes()
    assert png.startswith(PNG_SIGNATURE) and 1000 < len(png) <= ChartLimits().max_png_bytes
    assert Image.open(io.BytesIO(png)).size == (800, 500) == (chart.width, chart.height)
    assert chart.title == "Sales by month" and result.answer == "Chart: Sales by month"
    assert chart.data is not None and chart.data.columns == ["Month", "Sales"]
    assert chart.data.rows == [["Apr", 30], ["Feb", 20], ["Mar", 15]]  # numbers, cleaned
    assert result.explanation.startswith("Drew the chart 'Sales by month' from 3 rows of data")
    # The rows came back with their table positions: they are cited.
    assert {c.row for c in result.provenance.cells} == {1, 2, 3}
    assert result.confidence == 0.5 and result.code_errors == 0
    assert result.trace[0].observation == "drew a 800 x 500 chart 'Sales by month'"
    prompt = str(model.prompts[0])
    assert "make_chart(df)" in prompt and "Request: chart the top 3 months by sales" in prompt


def test_failing_code_is_shown_to_the_model_once(sandbox) -> None:  # noqa: ANN001
    bad = chart_reply("data = df[['Month', 'Revenue']]")
    good = chart_reply("data = df")
    model = ScriptedChatModel([bad, good])
    result = ChartSolver(model, sandbox).solve("plot sales by month", SALES)
    assert result.ok and result.chart is not None and result.chart.data is not None
    assert result.chart.data.n_rows == 5
    assert result.code_errors == 1 and result.confidence == 0.25
    repair = str(model.prompts[1][-1].content)
    assert "KeyError" in repair and "Revenue" in repair


def test_code_that_keeps_failing_gives_a_clear_error_not_a_crash(sandbox) -> None:  # noqa: ANN001
    bad = chart_reply("data = df[['Month', 'Revenue']]")
    model = ScriptedChatModel([bad, bad.replace("Revenue", "Profit")])
    result = ChartSolver(model, sandbox).solve("plot sales by month", SALES)
    assert not result.ok and result.chart is None and result.answer == ""
    assert result.error is not None
    assert result.error.startswith("the chart could not be drawn: ")
    assert "KeyError" in result.error and "Profit" in result.error


def test_an_oversized_figure_is_refused_before_it_is_rendered(sandbox) -> None:  # noqa: ANN001
    huge = chart_reply("data = df", figsize="(400, 300)")
    model = ScriptedChatModel([huge, huge])
    result = ChartSolver(model, sandbox).solve("plot sales by month", SALES)
    assert not result.ok and result.chart is None
    assert result.error == (
        "the chart could not be drawn: the chart would be 40000 x 30000 pixels at 100 dpi, "
        "over the limit of 4000000 pixels; use a smaller figsize such as (8, 5)"
    )
    assert "over the limit of 4000000 pixels" in str(model.prompts[1][-1].content)


def test_a_png_over_the_byte_limit_is_refused(sandbox) -> None:  # noqa: ANN001
    reply = chart_reply("data = df")
    solver = ChartSolver(
        ScriptedChatModel([reply]), sandbox, limits=ChartLimits(max_png_bytes=2000), repair=False
    )
    result = solver.solve("plot sales by month", SALES)
    assert not result.ok and result.chart is None and result.error is not None
    assert "bytes, over the limit of 2000 bytes" in result.error


def test_code_that_draws_nothing_is_told_so(sandbox) -> None:  # noqa: ANN001
    reply = "```python\ndef make_chart(df):\n    return df\n```"
    result = ChartSolver(ScriptedChatModel([reply]), sandbox, repair=False).solve(
        "plot sales by month", SALES
    )
    assert not result.ok and result.error is not None
    assert "drew no chart: no matplotlib figure was open" in result.error


def test_a_chart_without_returned_data_says_so(sandbox) -> None:  # noqa: ANN001
    reply = chart_reply("data = df").replace("    return data", "    return None")
    result = ChartSolver(ScriptedChatModel([reply]), sandbox).solve("plot sales", SALES)
    assert result.ok and result.chart is not None and result.chart.data is None
    assert result.chart.notes == ["the code returned no data table (make_chart should return it)"]


@pytest.mark.parametrize(
    ("poison", "message"),
    [
        ("lambda data: b'A' * 3_000_000", "over the limit of 1048576 bytes"),
        ("lambda data: _b64(b'GIF89a' + bytes(64))", "the chart is not a PNG image"),
    ],
)
def test_the_host_does_not_trust_the_sandboxed_capture(sandbox, poison: str, message: str) -> None:  # noqa: ANN001
    # Model code runs before the capture cell: it can replace what the capture uses.
    body = "import base64\n    _b64 = base64.b64encode\n"
    body += f"    base64.b64encode = {poison}\n    data = df"
    reply = chart_reply(body)
    result = ChartSolver(ScriptedChatModel([reply]), sandbox, repair=False).solve(
        "plot sales by month", SALES
    )
    assert not result.ok and result.chart is None and result.error is not None
    assert message in result.error
