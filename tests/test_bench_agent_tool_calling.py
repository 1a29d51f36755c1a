"""``bench/agent_tool_calling.py --wtq``: the example agent on the harness's WTQ dev sample.

A scripted chat model plays the agent over a tiny WTQ-format folder: the run
must draw the harness's dev sample, register each question's table alone, and
report denotation-scored accuracy, tool calls, seconds and the which/who check.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from fakes import ScriptedChatModel, tool_call
from langchain_core.messages import AIMessage

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))
import agent_tool_calling as bench  # noqa: E402
from _wtq_split import side_of, wtq_sample  # noqa: E402

TABLES = 12


@pytest.fixture
def wtq(tmp_path: Path) -> Path:
    """A WTQ-format folder: one "which team" question per table (the gold is a cell)."""
    root = tmp_path / "wtq"
    lines = ["id\tutterance\tcontext\ttargetValue"]
    for t in range(TABLES):
        path = root / "csv" / "200-csv" / f"{t}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"Name,Team\nann{t},red{t}\nbob{t},blue{t}\n")
        lines.append(f"nt-{t}\twhich team was bob{t} in?\tcsv/200-csv/{t}.csv\tblue{t}")
    (root / "training.tsv").write_text("\n".join(lines) + "\n")
    return root


def _replies(table: str, t: str, *, right: bool) -> list[AIMessage | str]:
    query = f'SELECT "Team" FROM {table} WHERE "Name" = \'bob{t}\''
    if right:
        return [
            tool_call("describe_table", {"table": table}, "c1"),
            tool_call("sql_query", {"query": query}, "c2"),
            f"Bob{t} played for Blue{t}.",
        ]
    return [  # a call to a tool the agent does not have, then a wrong answer
        tool_call("describe_table", {"table": table}, "c3"),
        tool_call("sql", {"query": query}, "c4"),
        f"Bob{t} played for red{t}.",
    ]


def test_wtq_mode_scores_the_dev_sample_with_a_scripted_agent(wtq: Path, tmp_path: Path) -> None:
    sample = wtq_sample(wtq / "training.tsv", wtq, "dev", 2, 0)
    assert {side_of(q, wtq) for q in sample} == {"dev"}
    tables = [bench.wtq_table_id(q, wtq) for q in sample]
    numbers = [q.table_path.stem for q in sample]
    assert tables == [f"wtq_200_{n}" for n in numbers]
    model = ScriptedChatModel(
        _replies(tables[0], numbers[0], right=True) + _replies(tables[1], numbers[1], right=False)
    )
    out = tmp_path / "run.json"
    steps = "describe_table,sql_query"  # the step-by-step tools (the default is ask_tables)
    args = ["--wtq", str(wtq), "--n", "2", "--seed", "0", "--out", str(out)]
    bench.main([*args, "--tools", steps, "--first-steps", steps], model=model)

    result = json.loads(out.read_text())
    assert result["complete"] is True and result["tools"] == "describe_table,sql_query"
    assert result["wtq"]["split"] == "dev" and result["wtq"]["question_ids"] == [
        q.id for q in sample
    ]
    first, second = result["rows"]
    assert first["table"] == tables[0] and first["gold"] == [f"blue{numbers[0]}"]
    assert first["correct"] is True and first["correct_strict"] is False  # a sentence
    assert first["names_entity"] is True and first["error"] is None
    assert first["tool_names"] == ["describe_table", "sql_query"] and first["tool_calls"] == 2
    assert [c["verdict"] for c in first["calls"]] == ["valid", "valid"]
    assert second["correct"] is False and second["names_entity"] is False
    assert [c["verdict"] for c in second["calls"]] == ["valid", "unknown tool"]
    # Each toolkit held only its question's table: the system prompt lists just that one.
    system = [p[0].content for p in model.prompts if p and p[0].type == "system"]
    assert f"- {tables[0]}: " in system[0] and tables[1] not in system[0]
    assert f"- {tables[1]}: " in system[-1] and tables[0] not in system[-1]

    summary = result["summary"]
    assert summary["questions"] == 2 and summary["accuracy"] == 0.5
    assert summary["accuracy_strict"] == 0.0
    assert summary["calls"] == 4 and summary["valid_calls"] == 3
    assert summary["call_validity"] == 0.75
    assert summary["tools_called"] == {"describe_table": 2, "sql_query": 1, "sql": 1}
    assert summary["which_who_questions"] == 2 and summary["names_entity_rate"] == 0.5
    assert summary["seconds_p50"] >= 0 and summary["seconds_mean"] >= 0
    assert summary["meets_target"] is (summary["seconds_p50"] <= 60)
    assert model.remaining == 0


def test_wtq_mode_refuses_the_test_split(wtq: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        bench.parse_args(["--wtq", str(wtq), "--split", "test"])
    assert "invalid choice: 'test'" in capsys.readouterr().err


def test_a_reply_states_the_gold_under_the_denotation_scorer() -> None:
    assert bench.states_item("Its attendance was 9,734 in 2009.", "9734")
    assert bench.states_item("It was held in Bangkok, Thailand.", "Bangkok, Thailand")
    assert not bench.states_item("The team was 12th.", "2")
    assert bench.states_item("There were 2.0 seasons.", "2")


def test_the_default_still_asks_the_bundled_questions(tmp_path: Path) -> None:
    query = 'SELECT "Depth" FROM lakes_of_turkey WHERE "Name in English" = \'Lake Van\''
    model = ScriptedChatModel(
        [
            tool_call("describe_table", {"table": "lakes_of_turkey"}, "c1"),
            tool_call("sql_query", {"query": query}, "c2"),
            "Lake Van is 451 m deep.",
        ]
    )
    out = tmp_path / "bundled.json"
    bench.main(["--limit", "1", "--out", str(out)], model=model)
    result = json.loads(out.read_text())
    [row] = result["rows"]
    assert row["question"] == "How deep is Lake Van?" and row["correct"] is True
    assert row["tool_names"] == ["describe_table", "sql_query"] and "wtq" not in result
    assert result["summary"]["accuracy"] == 1.0 and "accuracy_strict" not in result["summary"]
