"""The hybrid weights that ship are the ones the README's OTT-QA figures were measured with."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest

from tablerag_agents.retrieval.corpus_config import HybridWeights

RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results" / "retrieval_ottqa.json"


def test_default_weights_match_the_measured_ones() -> None:
    if not RESULTS.is_file():
        pytest.skip("no OTT-QA retrieval results in bench/results")
    measured = json.loads(RESULTS.read_text(encoding="utf-8"))["weights"]
    shipped = asdict(HybridWeights())
    for name, value in measured.items():
        assert shipped[name] == pytest.approx(value), name
