"""Fixtures for the solver tests: the scripted fake model and small real tables."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

# tests/ is not a package: make tests/fakes.py importable as `fakes`.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


@pytest.fixture
def seasons() -> pd.DataFrame:
    """Rows from WTQ table 204-csv/590 (as strings, like the WTQ loader gives)."""
    return pd.DataFrame(
        {
            "Year": ["2001", "2002", "2003", "2004", "2005"],
            "Division": ["2", "2", "2", "2", "2"],
            "League": [
                "USL A-League",
                "USL A-League",
                "USL A-League",
                "USL A-League",
                "USL First Division",
            ],
            "Regular Season": [
                "4th, Western",
                "2nd, Pacific",
                "3rd, Pacific",
                "1st, Western",
                "5th",
            ],
            "Avg. Attendance": ["7,169", "6,260", "5,871", "5,628", "6,028"],
        }
    )


@pytest.fixture
def hostile() -> pd.DataFrame:
    """A table whose column names would break naive SQL or Python."""
    return pd.DataFrame(
        {
            'na"me; DROP TABLE t; --': ["a", "b", "c"],
            "select": [1, 2, 3],
            "": [10.5, 20.5, 30.5],
            "Année (€)": ["x", "y", "z"],
        }
    )


@pytest.fixture(scope="session")
def sandbox():
    """One real bubblewrap sandbox shared by the solver tests."""
    from tablerag_agents.sandbox import Sandbox

    sb = Sandbox()
    yield sb
    sb.close()
