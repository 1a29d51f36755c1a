"""A chart answer on the page (headless Chromium, real sandbox): the PNG and its data table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fakes import ScriptedChatModel
from page_flow import TOKEN, page_server

from tablerag_agents.sandbox import Sandbox

pytestmark = [pytest.mark.browser, pytest.mark.sandbox]

LABEL = "<b>sq</b>"
CHART = (
    "```python\ndef make_chart(df):\n    import matplotlib.pyplot as plt\n"
    f"    data = df.head(10).assign(label={LABEL!r})\n"
    "    fig, ax = plt.subplots(figsize=(4, 3))\n"
    "    ax.plot(data['n'], data['value'])\n"
    "    ax.set_title('Squares')\n"
    "    return data\n```"
)
SHOWN = """() => {
    const fig = document.getElementById('answer-chart');
    const img = fig.querySelector('img');
    return {
        src: img.src.slice(0, 33), alt: img.alt, complete: img.complete,
        natural: [img.naturalWidth, img.naturalHeight],
        caption: fig.querySelector('figcaption').textContent,
        head: [...fig.querySelectorAll('.chart-data th')].map(th => th.textContent),
        rows: [...fig.querySelectorAll('.chart-data tbody tr')].map(
            tr => [...tr.children].map(td => td.textContent)),
        bold: fig.querySelectorAll('b').length,
    };
}"""
# chartFigure on values the server never sends: no image, the reason in words.
REFUSED = """async () => {
    const { chartFigure } = await import('/static/chart.js');
    const cases = [
        '"><img src=x onerror="document.title=1">', 'x);background:url(//evil', 123,
        'A'.repeat(1400004), btoa('GIF89a not a png'), 'iVBORw0KGgo=AAA',
    ];
    return cases.map(png_base64 => {
        const fig = chartFigure({png_base64, width: 4, height: 3, title: '<i>t</i>'});
        const error = fig.querySelector('.chart-error').textContent;
        return [fig.querySelectorAll('img, i').length, error];
    });
}"""
NATURAL_SIZE = "() => { const i = document.querySelector('#answer-chart img');"
NATURAL_SIZE += " return i && i.complete && i.naturalWidth > 0; }"


def _open(page: Any, url: str) -> None:
    page.goto(url + "/")
    page.fill("#token", TOKEN)
    page.click("#token-form button[type=submit]")
    page.wait_for_selector("#status:text-is('ready (token set)')")


def test_a_chart_answer_shows_the_image_and_its_data(
    browser: Any, sandbox: Sandbox, tmp_path: Path
) -> None:
    with page_server(tmp_path, model=ScriptedChatModel([CHART]), sandbox=sandbox) as url:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        errors: list[str] = []
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            _open(page, url)
            page.check("#tables-list li[data-table='numbers'] input")
            page.fill("#question", "plot value by n for n up to 10")
            page.click("#ask")
            page.wait_for_function(NATURAL_SIZE, timeout=90_000)
            shown = page.evaluate(SHOWN)
            answer = page.inner_text("#answer-text")
            page.reload()
            page.wait_for_function(NATURAL_SIZE, timeout=30_000)
            reopened = page.evaluate(SHOWN)
            refused = page.evaluate(REFUSED)
            title = page.title()
        finally:
            page.close()
    assert answer.startswith("Drew the chart 'Squares' from 10 rows of data")
    assert shown["src"] == "data:image/png;base64,iVBORw0KGgo"
    assert shown["natural"] == [400, 300] and shown["alt"] == "Chart: Squares"
    assert shown["caption"] == "Squares · data: 10 rows"
    assert shown["head"] == ["n", "value", "label"]
    assert shown["rows"][:3] == [["1", "1", LABEL], ["2", "4", LABEL], ["3", "9", LABEL]]
    assert shown["rows"][-1] == ["10", "100", LABEL] and len(shown["rows"]) == 10
    assert shown["bold"] == 0  # cell text is text, never HTML
    assert reopened == shown  # a reload reopens the thread with its chart
    assert refused == [
        [0, "The chart cannot be shown: the image is not base64."],
        [0, "The chart cannot be shown: the image is not base64."],
        [0, "The chart cannot be shown: the image is not text."],
        [0, "The chart cannot be shown: the image is over 1400000 characters."],
        [0, "The chart cannot be shown: the image is not a PNG."],
        [0, "The chart cannot be shown: the image is not base64."],
    ]
    # No script error and no Content-Security-Policy violation (the 401s before the token aside).
    assert title == "tablerag"
    assert [e for e in errors if "status of 401" not in e] == []
