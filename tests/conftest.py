"""Shared fixtures and marker handling for the test suite."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
from wtq_rows import seasons_frame

REPO = Path(__file__).resolve().parent.parent
TEST_DATA = Path(__file__).resolve().parent / "data"


def shared_data_dir() -> Path:
    """Return the development data folder (``TABLERAG_DATA_DIR`` or ``../shared/data``)."""
    return Path(os.environ.get("TABLERAG_DATA_DIR", REPO.parent / "shared" / "data"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip `data` tests without the shared data and `sandbox` tests without bubblewrap.

    In CI (CI=true) a missing bubblewrap is an error, not a skip: the sandbox
    tests must run there.
    """
    has_data = shared_data_dir().is_dir()
    has_bwrap = shutil.which("bwrap") is not None
    in_ci = os.environ.get("CI", "").lower() == "true"
    for item in items:
        if "data" in item.keywords and not has_data:
            item.add_marker(
                pytest.mark.skip(reason=f"shared data not found at {shared_data_dir()}")
            )
        if "sandbox" in item.keywords and not has_bwrap and not in_ci:
            item.add_marker(pytest.mark.skip(reason="bubblewrap (bwrap) is not installed"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared development data folder (tests using it are marked `data`)."""
    return shared_data_dir()


@pytest.fixture(scope="session")
def test_data() -> Path:
    """The small tables bundled with the tests."""
    return TEST_DATA


@pytest.fixture
def seasons() -> pd.DataFrame:
    """Rows from WTQ table 204-csv/590 (as strings, like the WTQ loader gives)."""
    return seasons_frame()


@pytest.fixture(scope="session")
def sandbox():
    """One real bubblewrap sandbox shared by a session's tests (a folder may override it)."""
    from tablerag_agents.sandbox import Sandbox

    sb = Sandbox()
    yield sb
    sb.close()
