"""`tablerag eval` and `tablerag report` end to end: real loader, solver and metrics, fake model."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fakes import BagOfWordsEmbeddings, ScriptedChatModel, sql_reply
from langchain_core.messages import BaseMessage
from typer.testing import CliRunner

from tablerag_agents import models
from tablerag_agents.cli import app
from tablerag_agents.evaluation import runner as eval_runner
from tablerag_agents.evaluation.loaders import DATASETS, load_dataset
from tablerag_agents.evaluation.methods import METHOD_NAMES
from tablerag_agents.evaluation.records import read_records
from tablerag_agents.evaluation.splits import split_examples

runner = CliRunner()
WTQ = Path(__file__).resolve().parents[1] / "evaluation" / "data" / "wtq"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# The scripted SQL for each test-split question of the fixture: one right, one wrong.
ANSWERS = {"nt-1283": "Argo Meresaar", "nt-9": "Kert Toobal"}


class InterruptedModel(ScriptedChatModel):
    """Replays its replies, then stops the run like a Ctrl-C."""

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        if self.remaining == 0:
            raise KeyboardInterrupt
        return super()._generate(messages, *args, **kwargs)


def _test_ids(n: int = 2) -> list[str]:
    return [ex.id for ex in split_examples(load_dataset("wtq", WTQ), "test", n, 0)]


def _replies(ids: list[str]) -> list[str]:
    return [sql_reply(f"SELECT '{ANSWERS[i]}' AS answer") for i in ids]


def _use_model(monkeypatch: pytest.MonkeyPatch, model: ScriptedChatModel) -> None:
    """Make the Resources that `eval` creates use ``model`` (and fake embeddings)."""
    monkeypatch.setattr(models, "get_chat_model", lambda settings: model)
    monkeypatch.setattr(models, "get_embeddings", lambda settings: BagOfWordsEmbeddings())


def _at_commit(monkeypatch: pytest.MonkeyPatch, commit: str, dirty: bool = False) -> None:
    """Make `eval` see the code at ``commit`` (whatever the checkout's real state)."""
    state = {"commit": commit, "dirty": dirty}
    monkeypatch.setattr(eval_runner, "git_state", lambda where=None: dict(state))


def _eval(out: Path, *extra: str, method: str = "sql", split: str = "test") -> Any:
    args = ["eval", "--dataset", "wtq", "--data", str(WTQ), "--method", method]
    args += ["--split", split, "--n", "2", "--seed", "0", "--out", str(out), "--no-progress"]
    return runner.invoke(app, [*args, *extra])


def test_eval_and_report_have_help() -> None:
    for name in ("eval", "report"):
        result = runner.invoke(app, [name, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.output
    assert "--column-split" in runner.invoke(app, ["report", "--help"]).output


def test_eval_runs_the_real_chain_and_report_compares(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _test_ids()
    model = ScriptedChatModel(_replies(ids))
    _use_model(monkeypatch, model)
    result = _eval(tmp_path, "--set", "budget=100", "--name", "sql_run")
    assert result.exit_code == 0, result.output
    assert "sql: accuracy 0.500" in result.output and "on 2 test questions" in result.output
    assert model.remaining == 0
    # The model saw each question's real table.
    assert "Kert Toobal" in str(model.prompts[0]) or "Kert Toobal" in str(model.prompts[1])

    header, records = read_records(tmp_path / "sql_run.jsonl")
    assert header["spec"]["settings"] == {"budget": "100"}
    assert [r["id"] for r in records] == ids
    by_id = {r["id"]: r for r in records}
    assert by_id["nt-1283"]["correct"] is True and by_id["nt-1283"]["answer"] == ["Argo Meresaar"]
    assert by_id["nt-9"]["correct"] is False and by_id["nt-9"]["gold"] == [
        "Siim Ennemuist",
        "Andri Aganits",
    ]
    assert all(r["method"] == "sql" and r["input_tokens"] > 0 for r in records)

    summary = json.loads((tmp_path / "sql_run.json").read_text())
    assert summary["split"] == "test" and summary["seed"] == 0 and summary["ids"] == ids
    assert summary["dataset"] == "wtq" and summary["data_path"] == str(WTQ)
    assert summary["model"]["chat_model"] == "embedded"  # the default settings
    assert summary["metrics"]["accuracy"] == 0.5 and summary["metrics"]["n"] == 2
    assert len(summary["git"]["commit"]) in (40, 7)  # a hash (or "unknown" outside a repo)

    # A second method on the same sample, then the report side by side.
    model2 = ScriptedChatModel(_replies(["nt-1283", "nt-1283"]))  # right for nt-1283 only
    _use_model(monkeypatch, model2)
    second = _eval(tmp_path, "--name", "sql_again")
    assert second.exit_code == 0, second.output
    report_dir = tmp_path / "report"
    shown = runner.invoke(
        app,
        [
            "report",
            str(tmp_path / "sql_run.json"),
            str(tmp_path / "sql_again.json"),
            "--out",
            str(report_dir),
            "--column-split",
            "test",
        ],
    )
    assert shown.exit_code == 0, shown.output
    assert "| sql (budget=100) | wtq | test | 2 | 0.500 |" in shown.stdout
    assert "| sql | wtq | test | 2 | 0.500 |" in shown.stdout
    assert "Not comparable" not in shown.stdout
    plots = sorted(report_dir.glob("*.png"))
    assert [p.name for p in plots] == [
        "accuracy_per_method.png",
        "accuracy_vs_coverage.png",  # the records store each answer's confidence
        "accuracy_vs_prompt_tokens.png",
    ]
    assert "## Accuracy vs coverage (confidence thresholds)" in shown.stdout
    assert all(p.read_bytes()[:8] == PNG_MAGIC for p in plots)
    assert (report_dir / "report.md").read_text().startswith("# Evaluation report")


def test_a_killed_eval_resumes_where_it_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _test_ids()
    _at_commit(monkeypatch, "a" * 40)  # a clean checkout: resuming it mixes nothing
    first = InterruptedModel(_replies(ids[:1]))  # answers one question, then Ctrl-C
    _use_model(monkeypatch, first)
    stopped = _eval(tmp_path, "--name", "run")
    assert stopped.exit_code == 130
    assert "interrupted" in stopped.output and "rerun the same command" in stopped.output
    assert [r["id"] for r in read_records(tmp_path / "run.jsonl")[1]] == ids[:1]
    assert not (tmp_path / "run.json").exists()

    # --summary-only: a summary of what is recorded, marked partial, without asking anything.
    silent = ScriptedChatModel([])
    _use_model(monkeypatch, silent)
    summarized = _eval(tmp_path, "--name", "run", "--summary-only")
    assert summarized.exit_code == 0, summarized.output
    assert silent.prompts == [] and "on 1 of 2 test questions" in summarized.output
    partial = json.loads((tmp_path / "run.json").read_text())
    assert partial["partial"] == {"done": 1, "of": 2} and partial["metrics"]["n"] == 1
    shown = runner.invoke(app, ["report", str(tmp_path / "run.json"), "--out", str(tmp_path / "r")])
    assert shown.exit_code == 0, shown.output
    assert "| sql | wtq | test | 1 of 2 (partial) | 0.000 |" in shown.stdout  # ids[0]: wrong
    assert "recorded 1 of its 2 questions" in shown.stdout
    nothing = _eval(tmp_path, "--name", "never_ran", "--summary-only")
    assert nothing.exit_code == 2 and "no records yet" in nothing.output

    rest = ScriptedChatModel(_replies(ids[1:]))
    _use_model(monkeypatch, rest)
    resumed = _eval(tmp_path, "--name", "run")
    assert resumed.exit_code == 0, resumed.output
    assert rest.remaining == 0 and len(rest.prompts) == 1  # only the second question
    assert [r["id"] for r in read_records(tmp_path / "run.jsonl")[1]] == ids
    finished = json.loads((tmp_path / "run.json").read_text())
    assert finished["metrics"]["accuracy"] == 0.5 and "partial" not in finished


def test_eval_resumes_another_commits_records_only_when_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _test_ids()
    _at_commit(monkeypatch, "a" * 40)
    _use_model(monkeypatch, InterruptedModel(_replies(ids[:1])))
    assert _eval(tmp_path, "--name", "run").exit_code == 130  # one answer at commit aaaa...
    _at_commit(monkeypatch, "b" * 40, dirty=True)
    rest = ScriptedChatModel(_replies(ids[1:]))
    _use_model(monkeypatch, rest)
    refused = _eval(tmp_path, "--name", "run")
    assert refused.exit_code == 1 and rest.prompts == []
    assert "a" * 40 in refused.output and "--allow-mixed-commits" in refused.output
    resumed = _eval(tmp_path, "--name", "run", "--allow-mixed-commits")
    assert resumed.exit_code == 0, resumed.output
    assert "mixes answers of several commits" in resumed.output
    summary = json.loads((tmp_path / "run.json").read_text())
    assert summary["answered_at_commits"] == {"a" * 40: 1, "b" * 40 + "+dirty": 1}
    shown = runner.invoke(app, ["report", str(tmp_path / "run.json"), "--out", str(tmp_path / "r")])
    assert "Mixed commits: sql (run.json) was answered by 2 versions" in shown.stdout


def test_eval_refuses_to_append_other_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_model(monkeypatch, ScriptedChatModel(_replies(_test_ids())))
    assert _eval(tmp_path, "--name", "run").exit_code == 0
    before = (tmp_path / "run.jsonl").read_bytes()
    model = ScriptedChatModel([])
    _use_model(monkeypatch, model)
    refused = _eval(tmp_path, "--name", "run", "--set", "budget=1000")
    assert refused.exit_code == 1
    assert "refusing to append" in refused.output and "settings: file has {}" in refused.output
    assert "Traceback" not in refused.output
    assert (tmp_path / "run.jsonl").read_bytes() == before and model.prompts == []
    other_model = _eval(tmp_path, "--name", "run", "--model", "openai:gpt-4o-mini")
    assert other_model.exit_code == 1 and "model: file has" in other_model.output


def test_report_refuses_a_dev_run_in_a_test_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dev_ids = [ex.id for ex in split_examples(load_dataset("wtq", WTQ), "dev", 2, 0)]
    assert not set(dev_ids) & set(_test_ids(2))  # disjoint by construction
    _use_model(monkeypatch, ScriptedChatModel([sql_reply("SELECT 1")] * 2))
    assert _eval(tmp_path, "--name", "dev_run", split="dev").exit_code == 0
    refused = runner.invoke(
        app,
        ["report", str(tmp_path / "dev_run.json"), "--out", str(tmp_path / "r")]
        + ["--column-split", "test"],
    )
    assert refused.exit_code == 2
    assert "dev_run.json (dev) is not on the test split" in refused.output
    assert not (tmp_path / "r").exists()
    labelled = runner.invoke(
        app, ["report", str(tmp_path / "dev_run.json"), "--out", str(tmp_path / "r"), "--no-plots"]
    )
    assert labelled.exit_code == 0 and "accuracy (dev)" in labelled.stdout
    assert "## dev split (tuning sample: not a reported result)" in labelled.stdout


def test_bad_eval_options_are_clear_errors(tmp_path: Path) -> None:
    result = _eval(tmp_path, method="magic")
    assert result.exit_code == 2 and "unknown method 'magic'" in result.output
    result = _eval(tmp_path, split="train")
    assert result.exit_code == 2 and "dev or test" in result.output
    result = _eval(tmp_path, "--set", "budget")
    assert result.exit_code == 2 and "KEY=VALUE" in result.output
    result = runner.invoke(app, ["report", str(tmp_path / "missing.json")])
    assert result.exit_code == 2 and "missing.json" in result.output
    assert not list(tmp_path.glob("*.jsonl"))


def test_the_readme_commands_use_existing_options() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme[readme.index("## Evaluation") : readme.index("## Development")]
    commands = re.findall(r"tablerag (eval|report)((?:[^\n]*\\\n)*[^\n]*)", section)
    assert {name for name, _ in commands} == {"eval", "report"} and len(commands) >= 8
    helps = {name: runner.invoke(app, [name, "--help"]).output for name in ("eval", "report")}
    for name, args in commands:
        for option in re.findall(r"(--[a-z][a-z-]*)", args):
            assert option in helps[name], f"`tablerag {name}` has no {option}"
        for method in re.findall(r"--method (\S+)", args):
            assert method in METHOD_NAMES
        for dataset in re.findall(r"--dataset (\S+)", args):
            assert dataset in DATASETS


def test_freeform_runs_report_bleu_and_rouge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fetaqa = WTQ.parent / "fetaqa"
    (example,) = split_examples(load_dataset("fetaqa", fetaqa), "test", 1, 0)
    _use_model(monkeypatch, ScriptedChatModel([f"Final Answer: {example.answers[0]}"]))
    args = ["eval", "--dataset", "fetaqa", "--data", str(fetaqa), "--method", "read_table"]
    args += [
        "--split",
        "test",
        "--n",
        "1",
        "--out",
        str(tmp_path),
        "--name",
        "feta",
        "--no-progress",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "feta.json").read_text())["metrics"]
    # The gold sentence back (the reading method drops its final period: BLEU < 100).
    assert metrics["metric"] == "bleu" and 90.0 < metrics["bleu"] <= 100.0
    assert metrics["rouge_l"] == pytest.approx(1.0)
    shown = runner.invoke(
        app, ["report", str(tmp_path / "feta.json"), "--out", str(tmp_path / "r")]
    )
    assert shown.exit_code == 0, shown.output
    bleu = f"{metrics['bleu']:.1f}"
    row = f"| read_table | fetaqa | test | 1 | {bleu} | [{bleu}, {bleu}] | 1.000 [1.000, 1.000] |"
    assert row in shown.stdout
    assert (tmp_path / "r" / "bleu_per_method.png").read_bytes()[:8] == PNG_MAGIC


def test_eval_runs_the_graph_with_its_context_and_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = ScriptedChatModel([sql_reply("SELECT 'Argo Meresaar' AS answer")] * 2)
    _use_model(monkeypatch, model)
    result = _eval(tmp_path, "--set", "solver=sql", "--workers", "2", "--name", "g", method="graph")
    assert result.exit_code == 0, result.output
    assert model.remaining == 0
    records = {r["id"]: r for r in read_records(tmp_path / "g.jsonl")[1]}
    assert set(records) == set(_test_ids())
    assert records["nt-1283"]["correct"] is True and records["nt-9"]["correct"] is False
    assert records["nt-9"]["detail"]["solver"] == "sql"
    assert records["nt-9"]["detail"]["nodes"] == ["prepare", "solve", "answer"]
    assert json.loads((tmp_path / "g.json").read_text())["settings"] == {"solver": "sql"}


def test_eval_asks_the_questions_an_id_file_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _test_ids()[::-1]
    listed = tmp_path / "picked.txt"
    listed.write_text("# two test questions, reversed\n" + "\n".join(ids) + "\n")
    model = ScriptedChatModel(_replies(ids))
    _use_model(monkeypatch, model)
    args = ["eval", "--dataset", "wtq", "--data", str(WTQ), "--method", "sql", "--split", "test"]
    result = runner.invoke(app, [*args, "--ids", str(listed), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "on 2 test questions" in result.output and model.remaining == 0
    header, records = read_records(tmp_path / "wtq-test-sql-n2-ids-picked.jsonl")
    assert header["spec"]["ids"] == ids and header["spec"]["ids_file"] == str(listed)
    assert [r["id"] for r in records] == ids
    # The list must be on the --split side, and --n and --ids exclude each other.
    refused = runner.invoke(app, [*args[:-1], "dev", "--ids", str(listed), "--out", str(tmp_path)])
    assert refused.exit_code != 0 and "not on the dev side" in refused.output
    both = runner.invoke(app, [*args, "--ids", str(listed), "--n", "2", "--out", str(tmp_path)])
    assert both.exit_code != 0 and "either --n" in both.output
    neither = runner.invoke(app, [*args, "--out", str(tmp_path)])
    assert neither.exit_code != 0 and "give --n" in neither.output
