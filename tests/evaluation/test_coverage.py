"""The accuracy-coverage curve `tablerag report` draws from the records' confidences."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_report import PNG_MAGIC, summary, write

from tablerag_agents.evaluation.coverage import best_point, coverage_curve, point_at
from tablerag_agents.evaluation.records import FORMAT
from tablerag_agents.evaluation.report import load_runs, render_markdown, write_report

# (confidence, right); None: the graph abstained (no answer).
OUTCOMES: list[tuple[float | None, bool]] = [
    (1.0, True),
    (1.0, True),
    (0.8, True),
    (0.8, False),
    (0.5, True),
    (0.5, False),
    (0.5, False),
    (0.25, False),
    (None, False),
    (0.0, False),
]


def records() -> list[dict[str, Any]]:
    """Records as `tablerag eval --method graph` writes them (confidence under detail)."""
    out = []
    for i, (conf, right) in enumerate(OUTCOMES):
        answered = conf is not None
        out.append(
            {
                "id": f"q{i}",
                "answer": ["x"] if answered else [],
                "correct": right,
                "detail": {"confidence": conf or 0.0, "abstained": not answered},
            }
        )
    return out


def test_the_curve_has_a_point_per_confidence() -> None:
    curve = coverage_curve(records())
    got = [(p.threshold, p.kept, p.right, p.questions) for p in curve]
    assert got == [
        (1.0, 2, 2, 10),
        (0.8, 4, 3, 10),
        (0.5, 7, 4, 10),
        (0.25, 8, 4, 10),
        (0.0, 9, 4, 10),  # the abstention is never kept
    ]
    assert [p.coverage for p in curve] == [0.2, 0.4, 0.7, 0.8, 0.9]
    assert curve[1].accuracy == 0.75 and curve[2].accuracy == pytest.approx(4 / 7)
    assert point_at(records(), 0.9).kept == 2 and point_at(records(), 1.01).accuracy is None
    assert best_point(curve, 0.75) == curve[1] and best_point(curve, 1.01) is None
    assert coverage_curve([{"id": "q", "answer": ["x"], "correct": True}]) == []


def _write_records(tmp_path: Path, name: str, rows: list[dict[str, Any]]) -> None:
    header = {"format": FORMAT, "started_at": "2026-11-01T10:00:00+00:00", "spec": {}}
    lines = [json.dumps(header)] + [json.dumps(r) for r in rows]
    (tmp_path / f"{name}.jsonl").write_text("\n".join(lines) + "\n")


def test_the_report_prints_and_plots_the_curve(tmp_path: Path) -> None:
    ids = [f"q{i}" for i in range(10)]
    data = summary("graph", ids=ids, value=0.4, settings={"min_confidence": "0.8"})
    paths = [write(tmp_path, "graph", data), write(tmp_path, "sql", summary("sql", ids=ids))]
    _write_records(tmp_path, "graph", records())
    markdown, _ = render_markdown(load_runs(paths))
    section = markdown.split("## Accuracy vs coverage (confidence thresholds)")[1]
    section = section.split("\n## ")[0]
    assert "### graph (min_confidence=0.8) (wtq test)" in section
    assert (
        "At the default threshold (min_confidence 0.80): accuracy 0.750 on 40% (4 of 10) "
        "of the questions." in section
    )
    assert (
        "Widest coverage at accuracy >= 0.80: confidence >= 1.000 keeps 20% (2 of 10) "
        "at accuracy 1.000." in section
    )
    assert "| 0.500 | 7 | 0.700 | 0.571 |" in section and "### sql" not in section
    report = write_report(paths, tmp_path / "report")
    plot = tmp_path / "report" / "accuracy_vs_coverage.png"
    assert plot in report.plots and plot.read_bytes().startswith(PNG_MAGIC)
    assert "![accuracy_vs_coverage](accuracy_vs_coverage.png)" in report.markdown


def test_without_a_setting_the_default_threshold_is_the_graphs(tmp_path: Path) -> None:
    ids = [f"q{i}" for i in range(10)]
    paths = [write(tmp_path, "graph", summary("graph", ids=ids))]
    _write_records(tmp_path, "graph", records())
    markdown, _ = render_markdown(load_runs(paths))
    assert "(min_confidence 0.00): accuracy 0.444 on 90% (9 of 10)" in markdown
