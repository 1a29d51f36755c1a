"""Every bench script starts from a fresh clone (``--help``), and none overwrites a saved result."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if not p.name.startswith("_"))

sys.path.insert(0, str(BENCH))
from _results import result_path  # noqa: E402


@pytest.fixture(scope="module")
def helps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess[str]]:
    """``python bench/X.py --help`` for every script, all at once, from an unrelated folder."""
    cwd = tmp_path_factory.mktemp("elsewhere")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    running = {
        name: subprocess.Popen(
            [sys.executable, str(BENCH / name), "--help"],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in SCRIPTS
    }
    done = {}
    for name, proc in running.items():
        out, err = proc.communicate(timeout=300)
        done[name] = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    return done


def test_every_script_is_listed() -> None:
    assert "backend_load.py" in SCRIPTS and "graph_wtq.py" in SCRIPTS and len(SCRIPTS) >= 9


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_runs(script: str, helps: dict[str, subprocess.CompletedProcess[str]]) -> None:
    done = helps[script]
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("usage:") and script in done.stdout


def test_default_output_never_replaces_a_saved_result(tmp_path: Path) -> None:
    default = tmp_path / "backend_load.json"
    assert result_path(default) == default  # nothing saved yet: the plain name
    default.write_text("{}")
    fresh = result_path(default)
    assert fresh != default and fresh.parent == tmp_path
    assert fresh.name.startswith("backend_load-") and fresh.suffix == ".json"
    assert result_path(default, force=True) == default


def test_an_existing_explicit_out_needs_force(tmp_path: Path) -> None:
    out = tmp_path / "mine.json"
    out.write_text("{}")
    with pytest.raises(SystemExit, match="--force"):
        result_path(tmp_path / "default.json", out)
    assert result_path(tmp_path / "default.json", out, force=True) == out


def test_readme_bench_commands_use_existing_options(
    helps: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"python bench/(\w+\.py)([^`|\n]*)", readme)
    assert len(commands) >= 8
    for script, args in commands:
        assert script in helps, f"README runs a missing bench script {script}"
        for option in re.findall(r"(--[a-z][a-z-]*)", args):
            assert option in helps[script].stdout, f"bench/{script} has no {option}"


def _records_file(path: Path, split: str, table_id: str, dataset: str = "wtq") -> Path:
    header = {"format": "tablerag-eval/1", "spec": {"dataset": dataset, "split": split}}
    record = {
        "id": "nt-1",
        "question": "who came after Ann?",
        "gold": ["Bo"],
        "answer": ["Cy"],
        "correct": False,
        "detail": {
            "solver": "sql",
            "table_ids": [table_id],
            "steps": [{"action": "sql", "code": 'SELECT "Name" FROM t', "ok": True}],
        },
    }
    path.write_text(json.dumps(header) + "\n" + json.dumps(record) + "\n")
    return path


def test_error_cases_show_a_dev_records_steps_and_table_and_refuse_test(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from error_cases import main as error_cases

    (tmp_path / "t.csv").write_text("Name,Rank\nAnn,1\nBo,2\nCy,3\n")
    dev = _records_file(tmp_path / "dev.jsonl", "dev", "t.csv")
    assert error_cases([str(dev), "--data", str(tmp_path)]) == 0
    page = capsys.readouterr().out
    assert "1 wrong of 1" in page and "who came after Ann?" in page
    assert 'SELECT "Name" FROM t' in page and "3 rows x 2 columns" in page and "Bo,2" in page
    test = _records_file(tmp_path / "test.jsonl", "test", "t.csv")
    assert error_cases([str(test), "--data", str(tmp_path)]) == 2
    assert "only dev runs" in capsys.readouterr().err


def test_error_cases_read_tabfact_tables_from_all_csv(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from error_cases import main as error_cases

    (tmp_path / "all_csv").mkdir()
    (tmp_path / "all_csv" / "1-1.html.csv").write_text("team#wins\nlions#3\nbears#5\n")
    dev = _records_file(tmp_path / "dev.jsonl", "dev", "1-1.html.csv", dataset="tabfact")
    assert error_cases([str(dev), "--data", str(tmp_path)]) == 0
    page = capsys.readouterr().out
    assert "2 rows x 2 columns" in page and "bears,5" in page and "not readable" not in page
