"""Fixtures for the graph tests: resources with the scripted model and small real tables."""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
import pytest
from fakes import BagOfWordsEmbeddings
from wtq_rows import seasons_frame

from tablerag_agents.resources import Resources
from tablerag_agents.tables import Table


@pytest.fixture
def seasons_table() -> Table:
    """Rows from WTQ table 204-csv/590 (a USL team's seasons)."""
    df = seasons_frame().drop(columns="Division")
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
