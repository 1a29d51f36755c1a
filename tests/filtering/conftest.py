"""Fixtures for the filter tests: a small real WTQ table and honest fake encoders.

``seasons`` and ``sandbox`` come from tests/conftest.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fakes import WordCountEmbeddings, word_onehot_encoder

DATA = Path(__file__).resolve().parent.parent / "data"


@pytest.fixture
def albums() -> pd.DataFrame:
    """WTQ table 200-csv/0 (first 8 rows), read as strings like the WTQ loader."""
    return pd.read_csv(DATA / "wtq_200_0.csv", dtype=str, keep_default_na=False)


@pytest.fixture
def bag_of_words() -> WordCountEmbeddings:
    """Bag-of-words embeddings."""
    return WordCountEmbeddings()


@pytest.fixture
def token_encoder() -> Callable[[Sequence[str]], list[np.ndarray]]:
    """Word one-hot token encoder for MaxSim."""
    return word_onehot_encoder
