"""The web page in a real headless Chromium: token, upload, ask, cited cells, reload."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from fake_model import ProgramChatModel
from page_flow import ASKED_VALUE, HOSTILE_NOTE, page_server, run_flow, write_squares_csv

pytestmark = pytest.mark.browser


def test_upload_ask_see_the_cited_cells_and_reload(browser: Any, tmp_path: Path) -> None:
    csv = write_squares_csv(tmp_path / "squares.csv")
    gate = threading.Event()  # the solver's model waits for it: the run is provably going
    with page_server(tmp_path, model=ProgramChatModel(gate=gate)) as url:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        try:
            question = f"Which n has value {ASKED_VALUE}?"
            result = run_flow(page, url, csv, question, tmp_path, gate=gate)
        finally:
            gate.set()
            page.close()
    # Errors are shown in words: first the token the server wants, then a bad file.
    assert "missing bearer token" in result.error_before_token
    assert "enter the server's token above" in result.error_before_token
    assert "unsupported table file 'notes.xyz'" in result.error_shown_for_bad_upload
    assert "HTTP 415" in result.error_shown_for_bad_upload
    # The run was followed live: its nodes while the solver's model was still held, ...
    assert result.shown_while_solving[:2] == ["prepare", "solve:"]
    assert result.answered_while_solving == 0
    # ... then every node and the model's tokens.
    assert result.run_nodes == ["prepare", "solve", "answer"]
    assert f'SELECT "n" FROM t WHERE "value" = {ASKED_VALUE}' in result.tokens_shown
    # The answer beside the table, its cited cell highlighted and scrolled into view.
    assert result.table_id.startswith("squares-")
    assert "200" in result.answer_text
    expected = [{"row": "199", "column": "n", "text": "200", "in_view": True}]
    assert result.cited == expected
    # Table text is shown as text, never parsed as HTML.
    assert result.hostile_note_text == HOSTILE_NOTE
    assert result.images_in_table == 0 and result.title == "tablerag"
    # A reload keeps the token (sessionStorage) and reopens the thread.
    assert result.thread_id in result.threads_listed_after_reload
    assert result.messages_after_reload == [
        f"user: Which n has value {ASKED_VALUE}?",
        f"assistant: {result.answer_text}",
    ]
    assert result.cited_after_reload == expected
    # Only the expected refusals (401 before the token, 415 for the bad file): no
    # script error and no Content-Security-Policy violation.
    assert [e for e in result.console_errors if "Failed to load resource" not in e] == []
