"""Fixtures for the graph tests: resources with the scripted model and small real tables."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from retrieval.conftest import BagOfWordsEmbeddings  # noqa: E402

from tablerag_agents.resources import Resources  # noqa: E402
from tablerag_agents.tables import Table  # noqa: E402


@pytest.fixture
def seasons_table() -> Table:
    """Rows from WTQ table 204-csv/590 (a USL team's seasons)."""
    df = pd.DataFrame(
        {
            "Year": ["2001", "2002", "2003", "2004", "2005"],
            "League": ["USL A-League"] * 4 + ["USL First Division"],
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
    return Table("seasons", df, caption="Portland Timbers seasons")


@pytest.fixture
def lakes_table() -> Table:
    """A second, unrelated table."""
    df = pd.DataFrame(
        {
            "Lake": ["Van", "Tuz", "Beysehir"],
            "Depth (m)": ["451", "1", "10"],
            "Area": ["3755", "1500", "656"],
        }
    )
    return Table("lakes", df, caption="Lakes of Turkey depth area")


def make_resources(model, *tables: Table) -> Resources:
    """Resources over the scripted model, bag-of-words embeddings and ``tables``."""
    res = Resources(chat_model=model, embeddings=BagOfWordsEmbeddings())
    for table in tables:
        res.add_table(table)
    return res


@pytest.fixture
def resources_factory() -> Iterator:
    """Build resources (closed after the test)."""
    made: list[Resources] = []

    def build(model, *tables: Table) -> Resources:
        res = make_resources(model, *tables)
        made.append(res)
        return res

    yield build
    for res in made:
        res.close()
