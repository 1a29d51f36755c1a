"""The web page's user flow, driven in a real headless Chromium (Playwright).

Shared by the browser test (tests/web/test_page_browser.py) and the bench script
(bench/web_page.py): the service runs in this process (uvicorn in a thread on a
loopback port) with the deterministic fake model of the server tests; the
browser enters the token, uploads a CSV, asks, waits for the answer with its
cited cells highlighted, and reloads the page.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "server"), str(HERE.parent)]

from fake_model import numbers_resources  # noqa: E402
from tablerag_agents.graphs import Context  # noqa: E402

from tablerag_agents.server import create_app  # noqa: E402

CHROMIUM_ENV = "TABLERAG_CHROMIUM"
"""Path of the Chromium (or Chrome) binary to drive; default: ``chromium`` on PATH."""
TOKEN = "page-test-token"
ROWS = 300
ASKED_VALUE = 40_000  # the value of n = 200, row 199 (0-based): far below the first screen
HOSTILE_NOTE = "<img src=x onerror=\"document.title='pwned'\">"


def find_chromium() -> str | None:
    """The Chromium binary to drive (``$TABLERAG_CHROMIUM``, else on PATH), or None."""
    explicit = os.environ.get(CHROMIUM_ENV)
    if explicit:
        return explicit if Path(explicit).is_file() else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    return None


def write_squares_csv(path: Path, rows: int = ROWS) -> Path:
    """A CSV of ``n``, ``value = n*n`` and a ``note``; the asked row's note is hostile HTML."""
    lines = ["n,value,note"]
    for n in range(1, rows + 1):
        note = HOSTILE_NOTE if n * n == ASKED_VALUE else f"square of {n}"
        quoted = '"' + note.replace('"', '""') + '"'
        lines.append(f"{n},{n * n},{quoted}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@contextmanager
def page_server(
    folder: Path,
    token: str | list[str] = TOKEN,
    model: Any | None = None,
    sandbox: Any | None = None,
) -> Iterator[str]:
    """Serve the app (fake model, the ``numbers`` table, threads in ``folder``); its base URL.

    ``sandbox``: a shared sandbox to run code in (default: one of the resources' own).
    """
    resources = numbers_resources(model, **({"sandbox": sandbox} if sandbox else {}))
    app = create_app(
        resources, db_path=folder / "threads.sqlite", token=token, context=Context(solver="sql")
    )
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        resources.close()


@dataclass
class FlowResult:
    """What the page showed, and how long each step took (seconds)."""

    thread_id: str = ""
    table_id: str = ""
    answer_text: str = ""
    cited: list[dict[str, str]] = field(default_factory=list)
    """Highlighted cells: ``row`` (0-based), ``column``, ``text``, ``in_view``."""
    cited_after_reload: list[dict[str, str]] = field(default_factory=list)
    messages_after_reload: list[str] = field(default_factory=list)
    threads_listed_after_reload: list[str] = field(default_factory=list)
    run_nodes: list[str] = field(default_factory=list)
    shown_while_solving: list[str] = field(default_factory=list)
    """Run lines on the page while the solver's model was held (with a ``gate``)."""
    answered_while_solving: int = -1
    tokens_shown: str = ""
    hostile_note_text: str = ""
    images_in_table: int = -1
    title: str = ""
    console_errors: list[str] = field(default_factory=list)
    error_before_token: str = ""
    error_shown_for_bad_upload: str = ""
    timings: dict[str, float] = field(default_factory=dict)


def launch(playwright: Any, chromium: str) -> Any:
    """Headless Chromium from ``chromium`` (never a downloaded browser)."""
    return playwright.chromium.launch(executable_path=chromium, headless=True)


def _cited(page: Any) -> list[dict[str, Any]]:
    return list(
        page.eval_on_selector_all(
            "#table-view td.cited",
            """cells => cells.map(td => {
                const box = td.getBoundingClientRect();
                const view = document.getElementById('table-scroll').getBoundingClientRect();
                return {row: td.dataset.row, column: td.dataset.column, text: td.textContent,
                        in_view: box.top >= view.top && box.bottom <= view.bottom};
            })""",
        )
    )


def run_flow(
    page: Any,
    base_url: str,
    csv: Path,
    question: str,
    tmp: Path,
    screenshot: Path | None = None,
    gate: threading.Event | None = None,
) -> FlowResult:
    """Drive the page through the whole flow; the result holds what it showed and timings.

    ``screenshot``, when given, is taken once the answer is shown (before the
    reload). ``gate``: the fake model's solver waits for it; the page must show
    the run's first node before it is set (the run is followed live).
    """
    out = FlowResult()
    page.on("console", lambda m: m.type == "error" and out.console_errors.append(m.text))
    page.on("pageerror", lambda e: out.console_errors.append(str(e)))
    clock = time.perf_counter

    started = clock()
    page.goto(base_url + "/")
    page.wait_for_selector("#status:text-is('waiting for the token')")  # the API said 401
    out.timings["page_load_s"] = clock() - started
    out.error_before_token = page.inner_text("#error")
    page.fill("#token", TOKEN)
    page.click("#token-form button[type=submit]")
    page.wait_for_selector("#status:text-is('ready (token set)')")  # tables and threads loaded
    page.wait_for_selector("#tables-list li[data-table='numbers']")

    bad = tmp / "notes.xyz"
    bad.write_text("not a table")
    page.set_input_files("#upload-file", str(bad))
    page.click("#upload-form button[type=submit]")
    page.wait_for_selector("#error:not([hidden])")
    out.error_shown_for_bad_upload = page.inner_text("#error")

    started = clock()
    page.set_input_files("#upload-file", str(csv))
    page.fill("#upload-caption", "squares")
    page.click("#upload-form button[type=submit]")
    page.wait_for_selector("#tables-list li[data-table^='squares'] input:checked")
    page.wait_for_selector("#table-view tbody tr")
    out.timings["upload_s"] = clock() - started
    out.table_id = page.get_attribute("#tables-list li[data-table^='squares']", "data-table") or ""

    started = clock()
    page.fill("#question", question)
    page.click("#ask")
    page.wait_for_selector("#run-nodes li.node")
    out.timings["first_node_s"] = clock() - started
    if gate is not None:
        page.wait_for_selector("#run-nodes li.progress")
        out.shown_while_solving = page.eval_on_selector_all(
            "#run-nodes li", "l => l.map(e => e.textContent.split(' ')[0])"
        )
        out.answered_while_solving = page.locator("#messages li.assistant").count()
        gate.set()
    page.wait_for_selector("#messages li.assistant")
    page.wait_for_selector("#table-view td.cited")
    out.timings["answer_s"] = clock() - started
    out.thread_id = page.evaluate("location.hash").removeprefix("#thread=")
    out.answer_text = page.inner_text("#answer-text")
    out.cited = _cited(page)
    out.run_nodes = page.eval_on_selector_all(
        "#run-nodes li.node", "l => l.map(e => e.dataset.node)"
    )
    out.tokens_shown = page.inner_text("#run-tokens")
    out.hostile_note_text = page.inner_text("#table-view tr.cited-row td:last-child")
    out.images_in_table = page.locator("#table-view img").count()
    if screenshot is not None:
        page.screenshot(path=str(screenshot))

    started = clock()
    page.reload()
    page.wait_for_selector("#messages li.assistant")
    page.wait_for_selector("#table-view td.cited")
    out.timings["reload_to_thread_s"] = clock() - started
    out.messages_after_reload = page.eval_on_selector_all(
        "#messages li", "l => l.map(e => e.className.split(' ')[0] + ': ' + e.textContent)"
    )
    out.threads_listed_after_reload = page.eval_on_selector_all(
        "#threads-list li", "l => l.map(e => e.dataset.thread)"
    )
    out.cited_after_reload = _cited(page)
    out.title = page.title()
    return out
