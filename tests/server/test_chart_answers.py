"""A chart answer reaches API clients: the reply's answer carries the PNG and its data."""

from __future__ import annotations

import base64
import io

import pytest
from fake_model import numbers_resources
from fakes import ScriptedChatModel
from PIL import Image
from tablerag_agents.graphs import Context

from tablerag_agents.sandbox import Sandbox
from tablerag_agents.solve.chart_image import PNG_SIGNATURE

pytestmark = pytest.mark.sandbox

CHART = (
    "```python\ndef make_chart(df):\n    import matplotlib.pyplot as plt\n"
    "    data = df.head(10)\n"
    "    fig, ax = plt.subplots(figsize=(4, 3))\n"
    "    ax.plot(data['n'], data['value'])\n"
    "    ax.set_title('Squares')\n"
    "    return data\n```"
)


def test_a_thread_reply_carries_the_chart(serve, sandbox: Sandbox) -> None:  # noqa: ANN001
    resources = numbers_resources(ScriptedChatModel([CHART]), sandbox=sandbox)
    live = serve(resources, context=Context())
    with live.client() as client:
        thread = client.post("/threads", json={"tables": ["numbers"]}).json()["thread_id"]
        response = client.post(
            f"/threads/{thread}/messages", json={"content": "plot value by n for n up to 10"}
        )
        assert response.status_code == 200, response.text
        reply = response.json()["message"]
        history = client.get(f"/threads/{thread}/messages").json()["messages"]
    answer = reply["answer"]
    assert answer["solver"] == "chart" and answer["text"] == "Chart: Squares"
    chart = answer["chart"]
    png = base64.b64decode(chart["png_base64"])
    assert png.startswith(PNG_SIGNATURE) and len(png) <= 1024 * 1024
    assert Image.open(io.BytesIO(png)).size == (400, 300) == (chart["width"], chart["height"])
    assert chart["data"]["columns"] == ["n", "value"] and chart["data"]["rows"][2] == [3, 9]
    # A reopened thread shows the same chart.
    assert history[-1]["role"] == "assistant" and history[-1]["answer"]["chart"] == chart
