"""Fixtures for the web page tests: the app on a loopback port, and headless Chromium.

Browser tests are marked ``browser``. Without Chromium or Playwright they skip
locally, and fail in CI (``CI=true``), where ``.ci/run`` installs both.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from page_flow import find_chromium, launch  # noqa: E402


def _missing() -> str | None:
    """Why the browser tests cannot run here (None: they can)."""
    if importlib.util.find_spec("playwright") is None:
        return "the Python package playwright is not installed (the dev extra)"
    if find_chromium() is None:
        return "no Chromium: apt-get install chromium (or set TABLERAG_CHROMIUM)"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module's tests (Debian's, never a downloaded one)."""
    missing = _missing()
    if missing is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"the browser tests must run in CI: {missing}")
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    chromium = find_chromium()
    assert chromium is not None
    with sync_playwright() as playwright:
        browser = launch(playwright, chromium)
        yield browser
        browser.close()
