"""The typed result of a graph run, and the rule that callers read the output only through it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from fakes import ScriptedChatModel, count_tokens, sql_reply
from tablerag_agents.graphs import NOT_FOUND, Context, GraphAnswer, TableQAResult, build_graph
from tablerag_agents.graphs.result import node_record

from tablerag_agents.solve.base import CitedCell

REPO = Path(__file__).resolve().parents[2]

CALLERS = [
    "tablerag_agents/qa.py",
    "tablerag_agents/cli.py",
    "tablerag_agents/server/runs.py",
    "tablerag_agents/server/routes_openai.py",
    "tablerag_agents/server/routes_threads.py",
    "tablerag_agents/evaluation/methods.py",
    "tools/ask_tables.py",
    "bench/graph_wtq.py",
]
"""Modules that run the graph and read what it returned."""

OUTPUT_KEYS = {
    "answer",
    "trace",
    "table_hits",
    "retrieved",
    "cited_cells",
    "confidence",
    "abstained",
    "low_confidence",
    "best_guess",
    "input_tokens",
    "output_tokens",
    "tablerag",
}
"""Keys of the graph's output (and of its answer and trace records)."""


def test_result_of_a_real_run(resources_factory, seasons_table) -> None:
    model = ScriptedChatModel([sql_reply('SELECT MIN("Year") FROM t')])
    graph = build_graph(resources_factory(model, seasons_table))
    out = graph.invoke(
        {"question": "first season?", "tables": ["seasons"]}, context=Context(solver="sql")
    )
    result = TableQAResult.from_output(out)
    answer = result.answer
    assert (answer.question, answer.text, answer.items) == ("first season?", "2001", ["2001"])
    assert (answer.abstained, answer.confidence, answer.solver, answer.error) == (
        False,
        0.5,  # one clean program run (solve/confidence.py)
        "sql",
        None,
    )
    assert answer.table_ids == ["seasons"] and answer.sentence
    assert isinstance(answer.cited_cells[0], CitedCell)
    assert (answer.cited_cells[0].table, answer.cited_cells[0].value) == ("seasons", "2001")
    # Costs: the scripted model's whitespace tokens, added up over the nodes.
    prompt_tokens = sum(count_tokens(m.content) for m in model.prompts[0])
    reply_tokens = count_tokens(sql_reply('SELECT MIN("Year") FROM t'))
    assert (result.input_tokens, result.output_tokens) == (prompt_tokens, reply_tokens)
    assert result.nodes == ["prepare", "solve", "answer"]
    assert result.seconds == pytest.approx(sum(r["seconds"] for r in out["trace"]))
    assert [s["action"] for s in result.solver_steps] == ["sql"] and result.solver_steps[0]["ok"]
    assert result.table_hits == [] and result.retrieved == {}
    # One shape everywhere: the state's answer, the reply's metadata and the typed answer agree.
    assert answer.record() == out["answer"]
    assert GraphAnswer.from_message(out["messages"][-1]) == answer
    assert TableQAResult.from_output(out, seconds=2.5).seconds == 2.5
    dumped = result.model_dump(mode="json")
    assert dumped["answer"] == out["answer"] and dumped["input_tokens"] == prompt_tokens


def test_result_of_a_failed_retried_run(resources_factory, seasons_table) -> None:
    bad = [sql_reply(f"SELECT nope{i} FROM t") for i in range(3)]
    model = ScriptedChatModel([*bad, "Final Answer: nothing I can read"])
    graph = build_graph(resources_factory(model, seasons_table))
    out = graph.invoke(
        {"question": "which year?", "tables": ["seasons"]},
        context=Context(solver="sql", retry_solvers=["read_table"]),
    )
    result = TableQAResult.from_output(out)
    assert result.nodes == ["prepare", "solve", "solve", "answer"]
    assert [s["ok"] for s in result.solver_steps if s["action"] == "sql"] == [False] * 3
    assert "nope0" in result.solver_steps[0]["code"]


def test_an_empty_output_is_an_abstention() -> None:
    result = TableQAResult.from_output({})
    assert result.answer.abstained and result.answer.text == "" and result.input_tokens == 0
    assert result.seconds == 0.0 and result.nodes == [] and result.solver_steps == []
    assert NOT_FOUND  # the answer node writes this text on abstention (see test_graph_flow)


def test_node_record_of_a_streamed_update() -> None:
    record = {"node": "solve", "seconds": 1.0, "input_tokens": 3}
    assert node_record({"attempts": [], "trace": [record]}) == record
    assert node_record({"attempts": []}) == {} and node_record(None) == {}


def hand_unpacking(source: str) -> list[str]:
    """Places where ``source`` reads a graph output key by hand.

    Flags ``x.get(KEY)`` and a key read through a read key (``x[KEY][...]``,
    ``x[KEY].get(...)``) for the keys in :data:`OUTPUT_KEYS`.
    """

    def key(node: ast.expr) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value if node.value in OUTPUT_KEYS else None
        return None

    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
            and key(node.args[0])
        ):
            found.append(f"line {node.lineno}: .get({key(node.args[0])!r})")
        inner = None
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Subscript):
            if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                inner = node.value
        elif isinstance(node, ast.Attribute) and node.attr == "get":
            inner = node.value if isinstance(node.value, ast.Subscript) else None
        if inner is not None and key(inner.slice):
            found.append(f"line {node.lineno}: [{key(inner.slice)!r}] read further")
    return found


def test_the_guard_sees_hand_unpacking() -> None:
    assert hand_unpacking('out.get("answer") or {}') == ["line 1: .get('answer')"]
    assert hand_unpacking('x = out["answer"]["text"]') == ["line 1: ['answer'] read further"]
    assert hand_unpacking('out["answer"].get("items")') == ["line 1: ['answer'] read further"]
    assert hand_unpacking('sum(r.get("input_tokens", 0) for r in t)')
    assert hand_unpacking('rec["answer"][:40]; row.get("items")') == []


@pytest.mark.parametrize("path", CALLERS)
def test_callers_read_the_output_only_through_the_typed_result(path: str) -> None:
    source = (REPO / path).read_text(encoding="utf-8")
    assert hand_unpacking(source) == [], f"{path} unpacks the graph's output by hand"
