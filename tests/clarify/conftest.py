"""Fixtures for the clarify tests: the tiny intros corpus of ``wiki_pages.py``, gzipped."""

from __future__ import annotations

from pathlib import Path

import pytest
from wiki_pages import write_corpus


@pytest.fixture
def corpus_gz(tmp_path: Path) -> Path:
    """A gzipped corpus of the pages above."""
    return write_corpus(tmp_path / "intros.jsonl.gz")
