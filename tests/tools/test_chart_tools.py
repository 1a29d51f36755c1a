"""Charts as tool artifacts: python_sandbox returns a drawn figure, ask_tables a chart answer."""

from __future__ import annotations

import base64
import io
import json

import pytest
from fakes import ScriptedChatModel
from langchain_core.messages import ToolMessage
from PIL import Image
from tablerag_agents.tools import PythonSandboxTool, TableRAGToolkit
from tools_testdata import call, fake_embeddings
from wtq_rows import seasons_frame

from tablerag_agents.sandbox import Sandbox
from tablerag_agents.solve.chart_image import PNG_SIGNATURE
from tablerag_agents.tables import Table

pytestmark = pytest.mark.sandbox

SEASONS = Table("seasons", seasons_frame().drop(columns="Division"), caption="Seasons")
DRAW = (
    "import matplotlib.pyplot as plt\n"
    "fig, ax = plt.subplots(figsize={size})\n"
    "ax.bar(df['Year'], df['Avg. Attendance'].str.replace(',', '').astype(int))\n"
    "ax.set_title('Attendance')\n"
    "total = len(df)\n"
    "total"
)


def run(tool: PythonSandboxTool, code: str) -> ToolMessage:
    config = {"configurable": {"thread_id": "charts"}}
    message = tool.invoke(
        {"type": "tool_call", "id": "c1", "name": tool.name, "args": {"code": code}}, config
    )
    assert isinstance(message, ToolMessage)
    return message


def png_of(chart: dict) -> Image.Image:
    data = base64.b64decode(chart["png_base64"])
    assert data.startswith(PNG_SIGNATURE)
    return Image.open(io.BytesIO(data))


def test_python_sandbox_returns_a_drawn_figure_as_an_artifact(sandbox: Sandbox) -> None:
    with TableRAGToolkit.from_tables(
        [SEASONS], embeddings=fake_embeddings(), sandbox=sandbox
    ) as kit:
        tool = kit.get_tool("python_sandbox")
        message = run(tool, DRAW.format(size="(5, 3)"))
        assert message.status != "error", message.content
        chart = message.artifact["chart"]
        assert png_of(chart).size == (500, 300) == (chart["width"], chart["height"])
        assert chart["title"] == "Attendance" and "plt.subplots" in chart["code"]
        assert message.content.splitlines()[0] == "5"
        assert (
            "[note] the figure 'Attendance' (500 x 300 px) was returned to the user as a PNG"
            in (message.content)
        )
        assert message.artifact["variables"] == ["plt", "total"]  # fig and ax are objects: not kept
        json.dumps(message.artifact)
        plain = run(tool, "total + 1")  # no figure: no chart, no note
        assert plain.content == "6" and plain.artifact["chart"] is None
        huge = run(tool, DRAW.format(size="(500, 500)"))
        assert huge.status != "error" and huge.artifact["chart"] is None
        assert "[note] the figure was not returned: the chart would be 50000 x 50000 pixels" in (
            huge.content
        )


def test_ask_tables_returns_the_chart_and_its_data(sandbox: Sandbox) -> None:
    code = (
        "```python\ndef make_chart(df):\n    import matplotlib.pyplot as plt\n"
        "    data = df[['Year', 'Avg. Attendance']]\n"
        "    fig, ax = plt.subplots(figsize=(6, 4))\n"
        "    ax.plot(data['Year'], data['Avg. Attendance'])\n"
        "    ax.set_title('Attendance by year')\n"
        "    return data\n```"
    )
    model = ScriptedChatModel([code])
    with TableRAGToolkit.from_tables(
        [SEASONS], chat_model=model, embeddings=fake_embeddings(), sandbox=sandbox
    ) as kit:
        message = call(kit.get_tool("ask_tables"), question="plot attendance by year")
    assert message.status != "error", message.content
    answer = message.artifact
    json.dumps(answer)
    assert answer["solver"] == "chart" and png_of(answer["chart"]).size == (600, 400)
    assert answer["chart"]["data"]["rows"][:2] == [[2001, 7169], [2002, 6260]]
    lines = message.content.splitlines()
    assert lines[0] == "Answer: Chart: Attendance by year"
    assert (
        "Chart 'Attendance by year': a 600 x 400 PNG, returned to the user in the artifact's "
        "'chart'" in lines
    )
    assert "Chart data: Year=2001, Avg. Attendance=7169; Year=2002, Avg. Attendance=6260;" in (
        message.content
    )
