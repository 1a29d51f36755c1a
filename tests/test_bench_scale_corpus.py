"""bench/scale_corpus.py: the projected peak memory and the --max-rss-mb guard."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))
import scale_corpus  # noqa: E402


def test_a_run_projected_past_the_limit_stops_before_loading_anything(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    done = subprocess.run(
        [sys.executable, str(BENCH / "scale_corpus.py"), "--n-tables", "100000"]
        + ["--max-rss-mb", "4000", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    projected = scale_corpus.projected_peak_mb(100_000)
    assert f"~{projected:.0f} MB passes --max-rss-mb 4000" in done.stderr
    assert "projected peak RSS for 100000 tables" in done.stdout
    assert not out.exists()


def test_the_projection_grows_with_the_corpus_and_fits_100k_in_12_gb() -> None:
    small, large = scale_corpus.projected_peak_mb(1000), scale_corpus.projected_peak_mb(100_000)
    assert 1000 < small < large < 12_000


def test_a_run_whose_rss_passes_the_limit_stops() -> None:
    args = scale_corpus.parse_args(["--n-tables", "5000", "--max-rss-mb", "1"])
    with pytest.raises(scale_corpus.MemoryLimitError, match="passed --max-rss-mb 1"):
        scale_corpus.check_memory(args, 2000, (1000, 10.0))


def test_the_rss_so_far_is_extrapolated_to_the_requested_size() -> None:
    args = scale_corpus.parse_args(["--n-tables", "5000"])
    now = scale_corpus.rss_mb()
    text = scale_corpus.check_memory(args, 2000, (1000, now - 100.0))  # 0.1 MB per table
    projected = float(text.split("~")[1].split(" MB")[0])
    assert projected == pytest.approx(now + 300.0, abs=5.0)


def _synthetic_sources(monkeypatch: pytest.MonkeyPatch, *flags: str) -> set[str]:
    import pandas as pd

    from tablerag_agents.tables import ottqa
    from tablerag_agents.tables.model import Table

    base = [
        Table(f"t{i}", pd.DataFrame({"Name": ["a", "b"], "Score": ["1", "2"]}), f"Title {i}", {})
        for i in range(6)
    ]
    monkeypatch.setattr(ottqa, "load_ottqa_corpus", lambda path: base)
    args = scale_corpus.parse_args(["--n-tables", "400", *flags])
    tables = [t for chunk in scale_corpus.corpus_batches(args, {"t0", "t1"}, 50) for t in chunk]
    assert len(tables) == 400 and [t.id for t in tables[:2]] == ["t0", "t1"]
    return {t.metadata["source"].removeprefix("synthetic from ") for t in tables[2:]}


def test_synthetic_tables_are_never_copies_of_a_gold_table(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _synthetic_sources(monkeypatch) == {"t2", "t3", "t4", "t5"}


def test_gold_copies_restores_the_older_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    assert {"t0", "t1"} <= _synthetic_sources(monkeypatch, "--gold-copies")
