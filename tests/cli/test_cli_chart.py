"""`tablerag ask` saves a chart answer's PNG and prints its data (scripted model, real sandbox)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from fakes import ScriptedChatModel
from PIL import Image
from typer.testing import CliRunner

from tablerag_agents import qa
from tablerag_agents.cli import app
from tablerag_agents.resources import Resources
from tablerag_agents.solve.chart_image import PNG_SIGNATURE

runner = CliRunner()
CHART = (
    "```python\ndef make_chart(df):\n    import matplotlib.pyplot as plt\n"
    "    data = df.groupby('Month', sort=False)['Sales'].sum()\n"
    "    fig, ax = plt.subplots(figsize=(5, 4))\n"
    "    data.plot.bar(ax=ax)\n"
    "    ax.set_title('Sales by month')\n"
    "    return data\n```"
)


def _table(tmp_path: Path) -> Path:
    path = tmp_path / "sales.csv"
    path.write_text("Month,Sales\nJan,10\nFeb,20\nJan,5\nMar,7\n")
    return path


def _use(monkeypatch: pytest.MonkeyPatch, replies: list[str]) -> Resources:
    res = Resources(chat_model=ScriptedChatModel(replies))
    monkeypatch.setattr(qa, "default_resources", lambda: res)
    return res


@pytest.mark.sandbox
def test_ask_saves_the_chart_where_told_and_prints_its_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = _use(monkeypatch, [CHART])
    out = tmp_path / "sales.png"
    args = ["ask", "plot sales by month", "--table", str(_table(tmp_path)), "--chart-out", str(out)]
    result = runner.invoke(app, args)
    res.close()
    assert result.exit_code == 0, result.output
    png = out.read_bytes()
    assert png.startswith(PNG_SIGNATURE) and Image.open(io.BytesIO(png)).size == (500, 400)
    assert "Answer: Chart: Sales by month" in result.output
    assert f"Chart: {out} (500 x 400 px) 'Sales by month'" in result.output
    assert "Chart data (3 rows)" in result.output and "│ Jan   │ 15    │" in result.output


@pytest.mark.sandbox
def test_ask_picks_a_free_default_file_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = _use(monkeypatch, [CHART])
    table = _table(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "chart.png").write_bytes(b"an older chart")
    result = runner.invoke(
        app, ["ask", "draw a bar chart of sales per month", "--table", str(table)]
    )
    res.close()
    assert result.exit_code == 0, result.output
    assert (tmp_path / "chart.png").read_bytes() == b"an older chart"  # never overwritten
    assert (tmp_path / "chart-2.png").read_bytes().startswith(PNG_SIGNATURE)
    assert "Chart: chart-2.png (500 x 400 px)" in result.output


def test_a_chart_out_in_a_missing_folder_is_refused_before_running(tmp_path: Path) -> None:
    out = tmp_path / "nope" / "c.png"
    result = runner.invoke(app, ["ask", "plot x", "--table", "x.csv", "--chart-out", str(out)])
    assert result.exit_code == 2
    assert "--chart-out: the folder" in result.output and "does not exist" in result.output
