"""The evaluation runner: records as questions finish, resume after a kill, honest summaries."""

from __future__ import annotations

import json
import logging
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tablerag_agents.config import Settings
from tablerag_agents.evaluation import runner
from tablerag_agents.evaluation.records import (
    MixedCommitsError,
    RecordsFile,
    RunMismatchError,
    RunSpec,
    read_records,
    read_summary,
)
from tablerag_agents.evaluation.report import load_runs, render_markdown
from tablerag_agents.evaluation.runner import (
    companion_folders,
    default_name,
    evaluate,
    git_state,
    model_description,
    other_checkouts,
    parse_settings,
)
from tablerag_agents.evaluation.types import EvalExample, Prediction

REPO = Path(__file__).resolve().parents[2]
CLEAN = "c0ffee0000000000000000000000000000000001"


@pytest.fixture
def at_commit(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Make the runner see the code at a given commit (clean unless ``dirty``)."""

    def move(commit: str = CLEAN, dirty: bool = False) -> None:
        state = {"commit": commit, "dirty": dirty}
        monkeypatch.setattr(runner, "git_state", lambda where=None: dict(state))

    move()
    return move


def _examples(count: int) -> list[EvalExample]:
    return [
        EvalExample(
            id=f"q{i}",
            dataset="toy",
            task="qa",
            question=f"what is {i}?",
            answers=[str(i)],
            table_id="t",
            load_tables=list,
        )
        for i in range(count)
    ]


class EchoMethod:
    """Answers each question's number (wrong for multiples of 3); can stop at one id."""

    def __init__(self, interrupt_at: str | None = None, raise_at: str | None = None) -> None:
        self.calls: list[str] = []
        self.interrupt_at = interrupt_at
        self.raise_at = raise_at

    def run(self, example: EvalExample) -> Prediction:
        if example.id == self.interrupt_at:
            raise KeyboardInterrupt  # a Ctrl-C or kill in the middle of the run
        self.calls.append(example.id)
        if example.id == self.raise_at:
            raise RuntimeError("solver crashed")
        number = int(example.id[1:])
        answer = "wrong" if number % 3 == 0 else str(number)
        return Prediction(answer=[answer], input_tokens=10 + number, output_tokens=2)


def _spec(examples: list[EvalExample], **changes: Any) -> RunSpec:
    values: dict[str, Any] = {
        "dataset": "toy",
        "data_path": "toy.jsonl",
        "method": "echo",
        "split": "test",
        "seed": 7,
        "n_requested": len(examples),
        "ids": [ex.id for ex in examples],
        "settings": {"budget": "100"},
        "model": {"chat_model": "fake"},
    }
    values.update(changes)
    return RunSpec(**values)


def _ids_in(path: Path) -> list[str]:
    return [r["id"] for r in read_records(path)[1]]


def test_resume_after_a_kill_runs_only_the_rest(tmp_path: Path, at_commit: Any) -> None:
    examples = _examples(8)
    spec = _spec(examples)
    path = tmp_path / "run.jsonl"
    first = EchoMethod(interrupt_at="q5")
    with pytest.raises(KeyboardInterrupt):
        evaluate(first, examples, spec, path, progress=False)
    assert first.calls == ["q0", "q1", "q2", "q3", "q4"]
    assert _ids_in(path) == ["q0", "q1", "q2", "q3", "q4"]  # written as each finished
    assert not path.with_suffix(".json").exists()  # no summary for an unfinished run

    second = EchoMethod()
    outcome = evaluate(second, examples, spec, path, progress=False)
    assert second.calls == ["q5", "q6", "q7"]
    lines = path.read_text().splitlines()
    assert len(lines) == 1 + 8  # the header, then each question exactly once
    assert _ids_in(path) == [f"q{i}" for i in range(8)]
    # q0, q3, q6 are wrong: 5 of 8 right, counted over the whole sample.
    metrics = outcome.summary["metrics"]
    assert metrics["n"] == 8 and metrics["accuracy"] == 5 / 8
    assert metrics["mean_input_tokens"] == sum(10 + i for i in range(8)) / 8
    record = json.loads(lines[2])
    assert record["method"] == "echo" and record["answer"] == ["1"] and record["correct"] is True
    assert record["input_tokens"] == 11 and record["gold"] == ["1"]


def test_a_third_run_of_a_finished_sample_runs_nothing(tmp_path: Path, at_commit: Any) -> None:
    examples = _examples(3)
    path = tmp_path / "run.jsonl"
    evaluate(EchoMethod(), examples, _spec(examples), path, progress=False)
    again = EchoMethod()
    evaluate(again, examples, _spec(examples), path, progress=False)
    assert again.calls == [] and len(_ids_in(path)) == 3


def test_a_line_cut_by_a_kill_is_dropped_and_redone(tmp_path: Path, at_commit: Any) -> None:
    examples = _examples(4)
    path = tmp_path / "run.jsonl"
    with pytest.raises(KeyboardInterrupt):
        evaluate(EchoMethod(interrupt_at="q2"), examples, _spec(examples), path, progress=False)
    with path.open("a") as handle:  # killed in the middle of writing q2's record
        handle.write('{"id": "q2", "method": "ec')
    method = EchoMethod()
    evaluate(method, examples, _spec(examples), path, progress=False)
    assert method.calls == ["q2", "q3"]
    assert _ids_in(path) == ["q0", "q1", "q2", "q3"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"settings": {"budget": "1000"}}, "settings"),
        ({"model": {"chat_model": "openai:gpt-4o-mini"}}, "model"),
        ({"split": "dev"}, "split"),
        ({"method": "readtable"}, "method"),
    ],
)
def test_a_file_of_another_configuration_is_refused(
    tmp_path: Path, change: dict[str, Any], field: str
) -> None:
    examples = _examples(3)
    path = tmp_path / "run.jsonl"
    evaluate(EchoMethod(), examples, _spec(examples), path, progress=False)
    before = path.read_bytes()
    method = EchoMethod()
    with pytest.raises(RunMismatchError) as info:
        evaluate(method, examples, _spec(examples, **change), path, progress=False)
    message = str(info.value)
    assert f"{field}: file has" in message and "refusing to append" in message
    assert "--name" in message
    assert method.calls == [] and path.read_bytes() == before


def test_another_sample_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    evaluate(EchoMethod(), _examples(3), _spec(_examples(3)), path, progress=False)
    bigger = _examples(4)
    with pytest.raises(RunMismatchError, match="ids: file has"):
        evaluate(EchoMethod(), bigger, _spec(bigger), path, progress=False)


def test_a_file_that_is_not_a_run_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text('{"id": "q0"}\n')
    with pytest.raises(ValueError, match="not a tablerag eval records file"):
        RecordsFile.open(path, _spec(_examples(1)))


def test_summary_records_provenance(tmp_path: Path) -> None:
    examples = _examples(4)
    spec = _spec(examples, model=model_description(Settings(chat_model="openai:gpt-4o-mini")))
    outcome = evaluate(EchoMethod(), examples, spec, tmp_path / "run.jsonl", progress=False)
    summary = read_summary(outcome.summary_file)
    assert outcome.summary_file == tmp_path / "run.json"
    assert summary == json.loads(json.dumps(outcome.summary))
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    assert summary["git"]["commit"] == head and isinstance(summary["git"]["dirty"], bool)
    # Each record names the code that answered it; the summary counts them.
    (label,) = summary["answered_at_commits"]
    assert label.startswith(head) and summary["answered_at_commits"][label] == 4
    assert summary["split"] == "test" and summary["seed"] == 7
    assert summary["ids"] == ["q0", "q1", "q2", "q3"] and summary["n"] == 4
    assert summary["dataset"] == "toy" and summary["data_path"] == "toy.jsonl"
    assert summary["method"] == "echo" and summary["settings"] == {"budget": "100"}
    assert summary["model"]["chat_model"] == "openai:gpt-4o-mini"
    assert "api_key" not in summary["model"] and summary["task"] == "qa"
    metrics = summary["metrics"]
    assert metrics["metric"] == "accuracy" and metrics["value"] == 0.5
    assert 0.0 <= metrics["ci"][0] <= 0.5 <= metrics["ci"][1] <= 1.0
    assert summary["started_at"] <= summary["finished_at"]


def test_git_state_outside_a_repository_is_unknown(tmp_path: Path) -> None:
    assert git_state(tmp_path) == {"commit": "unknown", "dirty": None}


def _checkout(root: Path, *folders: str) -> Path:
    for folder in folders:
        (root / folder).mkdir(parents=True)
        (root / folder / "__init__.py").write_text("")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_companions_from_another_checkout_are_named(tmp_path: Path) -> None:
    frozen = _checkout(tmp_path / "frozen", "tablerag_agents", "graphs", "prompts")
    installed = _checkout(tmp_path / "installed", "graphs")
    companions = {"graphs": installed / "graphs", "prompts": frozen / "prompts"}
    assert other_checkouts(frozen / "tablerag_agents", companions) == [
        f"graphs ({installed / 'graphs'})"
    ]
    same = {"graphs": frozen / "graphs", "prompts": frozen / "prompts"}
    assert other_checkouts(frozen / "tablerag_agents", same) == []


def test_this_checkout_loads_its_own_companions() -> None:
    folders = companion_folders()
    assert set(folders) == {"graphs", "prompts", "tools"}
    package = Path(runner.__file__).resolve().parents[1]
    assert other_checkouts(package, folders) == []
    assert "elsewhere" not in git_state()


def test_a_raising_method_is_recorded_as_an_error(tmp_path: Path) -> None:
    examples = _examples(3)
    path = tmp_path / "run.jsonl"
    outcome = evaluate(EchoMethod(raise_at="q1"), examples, _spec(examples), path, progress=False)
    assert outcome.summary["metrics"]["exception_rate"] == 1 / 3
    failed = read_records(path)[1][1]
    assert failed["id"] == "q1" and failed["error"] is True
    assert failed["error_message"] == "RuntimeError: solver crashed" and failed["answer"] == []
    assert failed["seconds"] > 0


def test_threads_answer_every_question_once(tmp_path: Path) -> None:
    examples = _examples(20)
    path = tmp_path / "run.jsonl"
    method = EchoMethod()
    outcome = evaluate(method, examples, _spec(examples), path, workers=4, progress=False)
    assert sorted(method.calls) == sorted(ex.id for ex in examples)
    assert sorted(_ids_in(path)) == sorted(ex.id for ex in examples)
    assert outcome.summary["metrics"]["accuracy"] == 13 / 20  # 0, 3, ..., 18 are wrong


def test_threads_stop_on_an_interrupt_and_resume(tmp_path: Path, at_commit: Any) -> None:
    examples = _examples(12)
    path = tmp_path / "run.jsonl"
    with pytest.raises(KeyboardInterrupt):
        evaluate(EchoMethod(interrupt_at="q6"), examples, _spec(examples), path, workers=2)
    done = set(_ids_in(path))
    assert "q6" not in done
    method = EchoMethod()
    evaluate(method, examples, _spec(examples), path, workers=2, progress=False)
    assert set(method.calls) == {ex.id for ex in examples} - done
    assert sorted(_ids_in(path)) == sorted(ex.id for ex in examples)


def test_parse_settings_and_default_name() -> None:
    assert parse_settings(["budget=1000", " filter = semantic", "x=a=b"]) == {
        "budget": "1000",
        "filter": " semantic",
        "x": "a=b",
    }
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_settings(["budget"])
    spec = _spec(_examples(2), settings={"solver": "sql", "budget": "1e3"}, data_path="/a b")
    assert default_name(spec) == "toy-test-echo-budget=1e3-solver=sql-n2-seed7"
    odd = _spec(_examples(2), settings={"path": "../x y/z"})
    assert "/" not in default_name(odd) and " " not in default_name(odd)


def test_a_larger_sample_reuses_the_smaller_runs_records(tmp_path: Path, at_commit: Any) -> None:
    small, large = _examples(3), _examples(6)
    evaluate(EchoMethod(), small, _spec(small), tmp_path / "run-n3.jsonl", progress=False)
    grown = EchoMethod()
    outcome = evaluate(grown, large, _spec(large), tmp_path / "run-n6.jsonl", progress=False)
    assert grown.calls == ["q3", "q4", "q5"]  # q0-q2 came from the n=3 run
    _, records = read_records(tmp_path / "run-n6.jsonl")
    assert [r.get("reused_from") for r in records] == ["run-n3.jsonl"] * 3 + [None] * 3
    assert outcome.summary["metrics"]["n"] == 6
    assert (tmp_path / "run-n3.jsonl").exists()  # the smaller run is left as it was


@pytest.mark.parametrize(
    "change",
    [
        {"settings": {"budget": "1000"}},
        {"method": "other"},
        {"seed": 8},
        {"ids": ["q9", "q1"]},
        {"data_path": "elsewhere/toy"},
    ],
)
def test_only_the_same_run_on_a_prefix_is_reused(
    tmp_path: Path, change: dict[str, Any], caplog: pytest.LogCaptureFixture, at_commit: Any
) -> None:
    small, large = _examples(2), _examples(4)
    spec = _spec(small, **change)
    if "ids" in change:
        small = [ex for ex in _examples(10) if ex.id in change["ids"]]
    evaluate(EchoMethod(), small, spec, tmp_path / "other.jsonl", progress=False)
    fresh = EchoMethod()
    with caplog.at_level(logging.WARNING, logger="tablerag_agents.evaluation.records"):
        evaluate(fresh, large, _spec(large), tmp_path / "run.jsonl", progress=False)
    assert fresh.calls == ["q0", "q1", "q2", "q3"]
    # another spelling of the data path is the one near-miss worth telling the user about
    assert ("not reusing other.jsonl" in caplog.text) == ("data_path" in change)


@pytest.mark.parametrize("how", ["replaced", "removed"])
def test_records_survive_the_file_being_swapped_during_a_run(
    tmp_path: Path, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    # e.g. `git stash` + `git stash pop` while a run appends: the file at the
    # path becomes a new one, and appends to the old handle would be lost.
    examples = _examples(4)
    path = tmp_path / "run.jsonl"
    with RecordsFile.open(path, _spec(examples)) as records:
        records.append({"id": "q0", "correct": True})
        older = path.read_bytes()  # the version a checkout would bring back
        records.append({"id": "q1", "correct": False})
        if how == "replaced":
            (tmp_path / "old.jsonl").write_bytes(older)
            (tmp_path / "old.jsonl").replace(path)
        else:
            path.unlink()
        with caplog.at_level(logging.WARNING, logger="tablerag_agents.evaluation.records"):
            records.append({"id": "q2", "correct": True})
        records.append({"id": "q3", "correct": True})
    header, kept = read_records(path)
    assert sorted(r["id"] for r in kept) == ["q0", "q1", "q2", "q3"]
    assert header["spec"]["ids"] == [ex.id for ex in examples]
    assert "was replaced or removed during the run" in caplog.text
    assert path.read_text().count('"id": "q0"') == 1  # nothing written twice


def test_a_wikipedia_run_names_its_background_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tablerag_agents.evaluation.runner import background_sources

    assert background_sources({"solver": "sql"}, Settings()) is None
    assert background_sources({"wikipedia": "false"}, Settings()) is None
    monkeypatch.setenv("TABLERAG_WIKIPEDIA", "offline")
    monkeypatch.setenv("TABLERAG_WIKI_INTROS", str(tmp_path / "corpus" / "intros.jsonl.gz"))
    found = background_sources({"wikipedia": "true"}, Settings())
    assert found == {"wikipedia": "offline", "wiki_intros": "intros.jsonl.gz"}  # no machine path
    # the switch reads as the graph's Context reads it
    assert background_sources({"wikipedia": "yes", "solver": "sql"}, Settings()) == found
    assert background_sources({"wikipedia": "true", "top_rows": "5"}, Settings()) is None
    examples = _examples(2)
    out = evaluate(
        EchoMethod(),
        examples,
        _spec(examples),
        tmp_path / "w.jsonl",
        progress=False,
        background=found,
    )
    assert out.summary["background"] == found
    plain = evaluate(EchoMethod(), examples, _spec(examples), tmp_path / "p.jsonl", progress=False)
    assert "background" not in plain.summary


FAKE = "fa1e000000000000000000000000000000000000"


def _recorded_at(path: Path, examples: list[EvalExample], commit: str) -> None:
    """Records of the first two questions, as if answered by the code at ``commit``."""
    with RecordsFile.open(path, _spec(examples)) as records:
        for ex in examples[:2]:
            records.append({"id": ex.id, "answer": [ex.id[1:]], "git_commit": commit})


def test_resuming_records_of_another_commit_is_refused(tmp_path: Path, at_commit: Any) -> None:
    examples, path = _examples(4), tmp_path / "run.jsonl"
    _recorded_at(path, examples, FAKE)
    method = EchoMethod()
    with pytest.raises(MixedCommitsError, match="--allow-mixed-commits") as info:
        evaluate(method, examples, _spec(examples), path, progress=False)
    assert FAKE in str(info.value) and f"this code is {CLEAN}" in str(info.value)
    assert method.calls == [] and len(_ids_in(path)) == 2  # nothing asked, nothing written


@pytest.mark.parametrize(("recorded", "dirty"), [(f"{CLEAN}+dirty", True), ("unknown", False)])
def test_a_dirty_or_unnamed_tree_cannot_resume_even_itself(
    tmp_path: Path, at_commit: Any, recorded: str, dirty: bool
) -> None:
    at_commit(recorded.removesuffix("+dirty"), dirty=dirty)
    examples, path = _examples(3), tmp_path / "run.jsonl"
    _recorded_at(path, examples, recorded)
    with pytest.raises(MixedCommitsError, match="uncommitted changes|cannot name"):
        evaluate(EchoMethod(), examples, _spec(examples), path, progress=False)


def test_allowed_mixed_commits_are_listed_in_summary_and_report(
    tmp_path: Path, at_commit: Any
) -> None:
    examples, path = _examples(4), tmp_path / "run.jsonl"
    _recorded_at(path, examples, FAKE)
    method = EchoMethod()
    outcome = evaluate(
        method, examples, _spec(examples), path, progress=False, allow_mixed_commits=True
    )
    assert method.calls == ["q2", "q3"]
    assert outcome.summary["answered_at_commits"] == {FAKE: 2, CLEAN: 2}
    markdown, _ = render_markdown(load_runs([outcome.summary_file]))
    assert "Mixed commits: echo (budget=100) (run.json) was answered by 2 versions" in markdown
    assert f"{CLEAN} (2 questions), {FAKE} (2 questions)" in markdown


def test_a_smaller_run_of_another_commit_is_not_reused(tmp_path: Path, at_commit: Any) -> None:
    small, large = _examples(2), _examples(4)
    at_commit(FAKE)
    evaluate(EchoMethod(), small, _spec(small), tmp_path / "run-n2.jsonl", progress=False)
    at_commit(CLEAN)
    fresh = EchoMethod()
    evaluate(fresh, large, _spec(large), tmp_path / "run-n4.jsonl", progress=False)
    assert fresh.calls == ["q0", "q1", "q2", "q3"]
    grown = EchoMethod()
    outcome = evaluate(
        grown,
        large,
        _spec(large),
        tmp_path / "other-n4.jsonl",
        progress=False,
        allow_mixed_commits=True,
    )
    assert grown.calls == ["q2", "q3"] and outcome.summary["answered_at_commits"] == {
        FAKE: 2,
        CLEAN: 2,
    }
