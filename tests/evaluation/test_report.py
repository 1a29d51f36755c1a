"""`tablerag report`'s engine: Markdown tables from run summaries, split labels, plots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tablerag_agents.evaluation.pandas_agent import PANDAS_AGENT_WARNING
from tablerag_agents.evaluation.plots import budget_sweeps
from tablerag_agents.evaluation.records import FORMAT
from tablerag_agents.evaluation.report import (
    SplitLabelError,
    load_runs,
    render_markdown,
    write_report,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
IDS = [f"nt-{i}" for i in range(100)]


def summary(
    method: str,
    *,
    split: str = "test",
    value: float = 0.54,
    ci: tuple[float, float] = (0.44, 0.64),
    settings: dict[str, str] | None = None,
    ids: list[str] | None = None,
    dataset: str = "wtq",
    **metrics: Any,
) -> dict[str, Any]:
    """A run summary as `tablerag eval` writes it."""
    ids = IDS if ids is None else ids
    return {
        "format": FORMAT,
        "dataset": dataset,
        "data_path": "../shared/data/wtq",
        "method": method,
        "split": split,
        "seed": 0,
        "n_requested": len(ids),
        "n": len(ids),
        "ids": ids,
        "settings": settings or {},
        "model": {"chat_model": "embedded"},
        "git": {"commit": "0123456789abcdef0123", "dirty": False},
        "metrics": {
            "task": "qa",
            "n": len(ids),
            "metric": "accuracy",
            "value": value,
            "ci": list(ci),
            "accuracy": value,
            "exception_rate": 0.07,
            "empty_rate": 0.0,
            "mean_input_tokens": 1234.4,
            "mean_output_tokens": 56.6,
            "mean_seconds": 12.34,
            "p50_seconds": 10.0,
            **metrics,
        },
        "started_at": "2026-11-01T10:00:00+00:00",
        "finished_at": "2026-11-01T11:00:00+00:00",
    }


def write(tmp_path: Path, name: str, data: dict[str, Any]) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


def test_markdown_shows_the_numbers_of_each_run(tmp_path: Path) -> None:
    paths = [
        write(tmp_path, "graph", summary("graph")),
        write(
            tmp_path,
            "readtable",
            summary("readtable", value=0.31, ci=(0.22, 0.405), exception_rate=0.0),
        ),
    ]
    markdown, warnings = render_markdown(load_runs(paths), column_split="test")
    assert warnings == []
    lines = markdown.splitlines()
    header = next(line for line in lines if line.startswith("| method"))
    assert header == (
        "| method | dataset | split | n | accuracy (test) | 95% CI | prompt tokens/q "
        "| completion tokens/q | s/q | exception rate |"
    )
    assert (
        "| graph | wtq | test | 100 | 0.540 | [0.440, 0.640] | 1234 | 57 | 12.3 (p50 10.0) "
        "| 7.0% |" in lines
    )
    assert "| readtable | wtq | test | 100 | 0.310 | [0.220, 0.405] | 1234 | 57 |" in markdown
    assert "## test split" in markdown and "## dev split" not in markdown
    assert "Not comparable" not in markdown
    assert "commit 0123456789ab," in markdown


def test_a_dev_run_is_refused_in_a_test_table(tmp_path: Path) -> None:
    paths = [
        write(tmp_path, "test_run", summary("graph")),
        write(tmp_path, "dev_run", summary("graph", split="dev")),
    ]
    out = tmp_path / "report"
    with pytest.raises(SplitLabelError, match=r"dev_run.json \(dev\) is not on the test split"):
        write_report(paths, out, column_split="test")
    assert not out.exists()  # nothing written


def test_without_a_column_split_each_split_gets_its_own_labelled_table(tmp_path: Path) -> None:
    paths = [
        write(tmp_path, "dev_run", summary("graph", split="dev", value=0.7, ids=IDS[:30])),
        write(tmp_path, "test_run", summary("graph")),
    ]
    markdown, _ = render_markdown(load_runs(paths))
    test_at = markdown.index("## test split")
    dev_at = markdown.index("## dev split (tuning sample: not a reported result)")
    assert test_at < dev_at
    assert "accuracy (test)" in markdown[test_at:dev_at]
    assert "accuracy (dev)" in markdown[dev_at:] and "0.700" in markdown[dev_at:]
    assert "0.700" not in markdown[test_at:dev_at]
    assert "Not comparable" not in markdown  # different splits are never side by side


def test_runs_on_different_samples_get_a_note(tmp_path: Path) -> None:
    paths = [
        write(tmp_path, "a", summary("graph")),
        write(
            tmp_path, "b", summary("readtable", ids=IDS[50:] + [f"nt-{i}" for i in range(200, 250)])
        ),
        write(tmp_path, "c", summary("sql")),
    ]
    markdown, _ = render_markdown(load_runs(paths))
    note = next(line for line in markdown.splitlines() if "Not comparable" in line)
    assert "wtq test runs are on different question samples" in note
    assert "sample 1 (n=100, seed 0): graph, sql;" in note
    assert "sample 2 (n=100, seed 0): readtable)" in note


def test_runs_on_prefixes_of_one_sample_get_a_note_pointing_to_the_paired_table(
    tmp_path: Path,
) -> None:
    paths = [
        write(tmp_path, "a", summary("graph")),
        write(tmp_path, "b", summary("readtable", ids=IDS[:30])),
    ]
    markdown, _ = render_markdown(load_runs(paths))
    note = next(line for line in markdown.splitlines() if "Not comparable" in line)
    assert "samples are prefixes of one seeded order (n=100: graph; n=30: readtable)" in note
    assert "different question samples" not in markdown


def test_the_pandas_agent_carries_its_warning(tmp_path: Path) -> None:
    paths = [write(tmp_path, "p", summary("pandas_agent"))]
    markdown, warnings = render_markdown(load_runs(paths))
    assert warnings == [PANDAS_AGENT_WARNING]
    assert f"> **Warning:** {PANDAS_AGENT_WARNING}" in markdown
    assert "host process" in PANDAS_AGENT_WARNING


def test_freeform_runs_show_bleu_and_rouge(tmp_path: Path) -> None:
    data = summary(
        "readtable",
        dataset="fetaqa",
        value=21.37,
        ci=(18.0, 24.5),
        metric="bleu",
        bleu=21.37,
        rouge_l=0.4567,
        rouge_l_ci=[0.41, 0.5],
    )
    del data["metrics"]["accuracy"]
    markdown, _ = render_markdown(load_runs([write(tmp_path, "f", data)]))
    assert "| BLEU (test) | 95% CI | ROUGE-L (test) [95% CI] |" in markdown
    assert "| 21.4 | [18.0, 24.5] | 0.457 [0.410, 0.500] |" in markdown


def test_settings_tell_runs_apart(tmp_path: Path) -> None:
    paths = [write(tmp_path, "b", summary("graph", settings={"budget": "100", "filter": "llm"}))]
    markdown, _ = render_markdown(load_runs(paths))
    assert "| graph (budget=100, filter=llm) | wtq |" in markdown


def test_runs_with_the_same_label_are_told_apart_by_commit_or_file(tmp_path: Path) -> None:
    ids = ["q1", "q2"]
    old, new = summary("graph", ids=ids), summary("graph", ids=ids)
    new["git"] = {"commit": "fedcba9876543210fedc", "dirty": False}
    paths = [write(tmp_path, "old", old), write(tmp_path, "new", new)]
    write_records(tmp_path, "old", {"q1": True, "q2": False})
    write_records(tmp_path, "new", {"q1": True, "q2": True})
    runs = load_runs(paths)
    assert [r.label for r in runs] == ["graph @0123456", "graph @fedcba9"]
    markdown, _ = render_markdown(runs, baseline="graph @0123456")
    assert _paired_row(markdown, "graph @fedcba9", "graph @0123456")[6].startswith("+0.500")
    # Same commit: the file names tell them apart; a lone run keeps its plain label.
    paths = [write(tmp_path, "a", summary("graph")), write(tmp_path, "b", summary("graph"))]
    paths.append(write(tmp_path, "c", summary("sql")))
    assert [r.label for r in load_runs(paths)] == ["graph @a", "graph @b", "sql"]


def test_a_file_that_is_not_a_summary_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"accuracy": 1}')
    with pytest.raises(ValueError, match="not a tablerag eval summary"):
        load_runs([bad])


def _assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 5_000, path


def test_plots_are_written_as_png(tmp_path: Path) -> None:
    budgets = {"100": 0.42, "1000": 0.55, "10000": 0.47}  # seed 002's U-shape, inverted
    paths = [
        write(
            tmp_path,
            f"b{b}",
            summary("graph", value=v, ci=(v - 0.1, v + 0.1), settings={"budget": b}),
        )
        for b, v in budgets.items()
    ]
    paths.append(write(tmp_path, "readtable", summary("readtable", value=0.3)))
    report = write_report(paths, tmp_path / "report", column_split="test")
    names = sorted(p.name for p in report.plots)
    assert names == [
        "accuracy_per_method.png",
        "accuracy_vs_budget.png",
        "accuracy_vs_prompt_tokens.png",
    ]
    for path in report.plots:
        _assert_png(path)
    assert report.markdown_path == tmp_path / "report" / "report.md"
    written = report.markdown_path.read_text()
    assert "![accuracy_vs_budget](accuracy_vs_budget.png)" in written


def test_no_budget_plot_without_a_sweep(tmp_path: Path) -> None:
    paths = [
        write(tmp_path, "a", summary("graph", settings={"budget": "100"})),
        write(tmp_path, "b", summary("graph", settings={"budget": "1000", "filter": "llm"})),
        write(tmp_path, "c", summary("sql")),
    ]
    report = write_report(paths, tmp_path / "report")
    assert sorted(p.name for p in report.plots) == [
        "accuracy_per_method.png",
        "accuracy_vs_prompt_tokens.png",
    ]


def test_budget_sweeps_group_runs_that_differ_only_in_budget(tmp_path: Path) -> None:
    runs = load_runs(
        [
            write(tmp_path, "a", summary("graph", settings={"budget": "1000", "solver": "sql"})),
            write(tmp_path, "b", summary("graph", settings={"budget": "100", "solver": "sql"})),
            write(tmp_path, "c", summary("graph", settings={"budget": "100"})),  # other solver
            write(
                tmp_path,
                "d",
                summary("graph", settings={"budget": "10000", "solver": "sql"}, split="dev"),
            ),
            write(tmp_path, "e", summary("graph", settings={"budget": "1e4", "solver": "sql"})),
        ]
    )
    sweeps = budget_sweeps(runs)
    assert list(sweeps) == ["graph (solver=sql), wtq test"]
    assert [b for b, _ in sweeps["graph (solver=sql), wtq test"]] == [100.0, 1000.0, 10000.0]


def write_records(tmp_path: Path, name: str, correct: dict[str, bool]) -> None:
    """The records file beside a summary: a header line, then one scored question per line."""
    lines = [json.dumps({"format": FORMAT, "started_at": "2026-11-01T10:00:00+00:00", "spec": {}})]
    lines += [json.dumps({"id": qid, "correct": ok}) for qid, ok in correct.items()]
    (tmp_path / f"{name}.jsonl").write_text("\n".join(lines) + "\n")


def _paired_row(markdown: str, a: str, b: str) -> list[str]:
    section = markdown.split("## Paired comparisons (same questions)")[1]
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[:2] == [a, b]:
            return cells
    raise AssertionError(f"no paired row {a} vs {b} in:\n{section}")


def test_paired_comparison_uses_only_the_questions_both_runs_recorded(tmp_path: Path) -> None:
    ids = ["q1", "q2", "q3", "q4", "q5"]
    paths = [
        write(tmp_path, "graph", summary("graph", ids=ids)),
        write(tmp_path, "pandas", summary("pandas_agent", ids=ids)),
    ]
    write_records(tmp_path, "graph", {"q1": True, "q2": True, "q3": False, "q4": True})
    write_records(tmp_path, "pandas", {"q1": True, "q2": False, "q3": False, "q5": True})
    markdown, _ = render_markdown(load_runs(paths))
    row = _paired_row(markdown, "graph", "pandas_agent")
    # shared: q1, q2, q3 -> graph 2/3, pandas 1/3, ratio 2.00
    assert row[3:6] == ["3", "0.667", "0.333"]
    assert row[6].startswith("+0.333 [")
    assert row[7].startswith("2.00")


def test_paired_comparison_against_a_baseline_only(tmp_path: Path) -> None:
    ids = ["q1", "q2"]
    names = {"graph": "graph", "sql": "sql", "pandas": "pandas_agent"}
    paths = [write(tmp_path, n, summary(m, ids=ids)) for n, m in names.items()]
    for name in names:
        write_records(tmp_path, name, {"q1": True, "q2": name != "pandas"})
    markdown, _ = render_markdown(load_runs(paths), baseline="pandas_agent")
    section = markdown.split("## Paired comparisons (same questions)")[1].split("\n## ")[0]
    assert _paired_row(markdown, "graph", "pandas_agent")[7].startswith("2.00")
    assert _paired_row(markdown, "sql", "pandas_agent")
    assert "| graph | sql |" not in section


def test_no_paired_section_without_records_files(tmp_path: Path) -> None:
    paths = [write(tmp_path, "graph", summary("graph")), write(tmp_path, "sql", summary("sql"))]
    markdown, _ = render_markdown(load_runs(paths))
    assert "Paired comparisons" not in markdown


def test_runs_say_which_commits_answered_a_resumed_run(tmp_path: Path) -> None:
    data = summary("graph")
    data["answered_at_commits"] = {"0123456789abcdef0123": 60, "fedcba9876543210fedc": 40}
    markdown, _ = render_markdown(load_runs([write(tmp_path, "graph", data)]))
    assert "answered at: 0123456789ab: 60, fedcba987654: 40" in markdown
    data["answered_at_commits"] = {"0123456789abcdef0123": 100}
    markdown, _ = render_markdown(load_runs([write(tmp_path, "graph", data)]))
    assert "answered at" not in markdown


def test_a_ratio_without_an_interval_says_why(tmp_path: Path) -> None:
    ids = [f"q{i}" for i in range(30)]
    paths = [
        write(tmp_path, "graph", summary("graph", ids=ids)),
        write(tmp_path, "pandas", summary("pandas_agent", ids=ids)),
    ]
    write_records(tmp_path, "graph", {q: i < 9 for i, q in enumerate(ids)})
    write_records(tmp_path, "pandas", {q: i < 2 for i, q in enumerate(ids)})
    markdown, _ = render_markdown(load_runs(paths))
    assert _paired_row(markdown, "graph", "pandas_agent")[7] == (
        "4.50 (no interval: B scores 0 in over 5% of resamples)"
    )
