"""Fixtures for the solver tests (``seasons`` and ``sandbox`` come from tests/conftest.py)."""

from __future__ import annotations

import pandas as pd
import pytest


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
