"""The graph's nodes and conditional edges, run end to end on the scripted model."""

from __future__ import annotations

import pandas as pd
from fakes import ScriptedChatModel, sql_reply
from graph_runs import run_graph
from tablerag_agents.graphs import NOT_FOUND, Context, build_graph

from tablerag_agents.tables import Table


def test_a_given_small_table_goes_straight_to_solve(resources_factory, seasons_table) -> None:
    model = ScriptedChatModel([sql_reply('SELECT MIN("Year") FROM t')])
    graph = build_graph(resources_factory(model, seasons_table))
    ran, out = run_graph(
        graph, {"question": "first season?", "tables": ["seasons"]}, Context(solver="sql")
    )
    assert ran == ["prepare", "solve", "answer"]
    answer = out["answer"]
    assert answer["text"] == "2001" and not answer["abstained"] and answer["confidence"] == 0.5
    assert answer["cited_cells"] and answer["cited_cells"][0]["value"] == "2001"
    assert answer["table_ids"] == ["seasons"]
    assert [r["node"] for r in out["trace"]] == ["prepare", "solve", "answer"]
    solve = out["trace"][1]
    assert solve["input_tokens"] > 0 and solve["output_tokens"] > 0 and solve["seconds"] >= 0
    assert "2001" in out["messages"][-1].content


def test_a_zero_is_an_answer_not_a_reason_to_retry(resources_factory, seasons_table) -> None:
    model = ScriptedChatModel([sql_reply("SELECT COUNT(*) FROM t WHERE \"League\" = 'MLS'")])
    graph = build_graph(resources_factory(model, seasons_table))
    ran, out = run_graph(
        graph,
        {"question": "how many seasons did they play in MLS?", "tables": ["seasons"]},
        Context(solver="sql", retry_solvers=["read_table"]),
    )
    assert ran == ["prepare", "solve", "answer"] and model.remaining == 0
    assert out["answer"]["text"] == "0" and not out["answer"]["abstained"]


def test_no_value_retries_with_the_next_solver(resources_factory, seasons_table) -> None:
    bad = [sql_reply(f"SELECT nope{i} FROM t") for i in range(3)]
    model = ScriptedChatModel([*bad, "Final Answer: 2003"])
    graph = build_graph(resources_factory(model, seasons_table))
    ran, out = run_graph(
        graph,
        {"question": "which year were they 3rd?", "tables": ["seasons"]},
        Context(solver="sql", retry_solvers=["sql", "read_table"]),
    )
    # "sql" already ran, so the retry goes to read_table.
    assert ran == ["prepare", "solve", "solve", "answer"]
    assert out["answer"]["text"] == "2003" and out["answer"]["solver"] == "read_table"


def test_an_answerless_run_abstains(resources_factory, seasons_table) -> None:
    model = ScriptedChatModel([sql_reply(f"SELECT nope{i} FROM t") for i in range(3)])
    graph = build_graph(resources_factory(model, seasons_table))
    ran, out = run_graph(
        graph,
        {"question": "which year?", "tables": ["seasons"]},
        Context(solver="sql", retry_solvers=[]),
    )
    assert ran == ["prepare", "solve", "answer"]
    assert out["answer"]["abstained"] and out["answer"]["text"] == NOT_FOUND
    assert out["answer"]["error"] and NOT_FOUND in out["messages"][-1].content


def test_corpus_search_picks_the_table(resources_factory, seasons_table, lakes_table) -> None:
    model = ScriptedChatModel(
        ['```sql\nSELECT "Lake" FROM t ORDER BY CAST("Depth (m)" AS INT) DESC LIMIT 1\n```']
    )
    graph = build_graph(resources_factory(model, seasons_table, lakes_table))
    ran, out = run_graph(
        graph,
        {"question": "Which lake of Turkey has the largest depth?"},
        Context(solver="sql", max_tables=1),
    )
    assert ran == ["prepare", "retrieve_tables", "solve", "answer"]
    assert out["table_ids"] == ["lakes"] and out["answer"]["text"] == "Van"


def test_close_scores_keep_several_tables(resources_factory, seasons_table, lakes_table) -> None:
    model = ScriptedChatModel([sql_reply("SELECT COUNT(*) FROM lakes")])
    graph = build_graph(resources_factory(model, seasons_table, lakes_table))
    _, out = run_graph(
        graph,
        {"question": "lakes seasons"},
        Context(solver="sql", max_tables=2, multi_table_margin=1.0),
    )
    assert sorted(out["table_ids"]) == ["lakes", "seasons"]
    prompt = model.prompts[0][-1].content
    assert "lakes" in prompt and "seasons" in prompt  # both tables described to the solver


def test_large_tables_get_expansion_and_schema_cells(resources_factory) -> None:
    df = pd.DataFrame(
        {"city": [f"city {i}" for i in range(40)], "pop": [str(1000 + i) for i in range(40)]}
    )
    big = Table("cities", df, caption="City populations")
    model = ScriptedChatModel(
        [
            'Here you go: {"schema_queries": ["population"], "cell_queries": ["city 7"]}',
            sql_reply('SELECT "pop" FROM t WHERE "city" = \'city 7\''),
        ]
    )
    graph = build_graph(resources_factory(model, big))
    ran, out = run_graph(
        graph,
        {"question": "population of city 7?", "tables": ["cities"]},
        Context(solver="sql", large_table_cells=50),
    )
    assert ran == ["prepare", "expand_query", "retrieve_schema_cells", "solve", "answer"]
    expand = next(r for r in out["trace"] if r["node"] == "expand_query")["produced"]
    assert expand == {"schema_queries": ["population"], "cell_queries": ["city 7"]}
    solver_prompt = model.prompts[1][-1].content
    assert "Relevant cell values" in solver_prompt and '"city 7"' in solver_prompt
    assert out["answer"]["text"] == "1007"


def test_unparsable_expansion_falls_back_to_the_question(resources_factory) -> None:
    df = pd.DataFrame({"a": [str(i) for i in range(30)], "b": [str(i * 2) for i in range(30)]})
    model = ScriptedChatModel(["I cannot do JSON", sql_reply('SELECT MAX("b") FROM t')])
    graph = build_graph(resources_factory(model, Table("nums", df)))
    _, out = run_graph(
        graph,
        {"question": "largest b?", "tables": ["nums"]},
        Context(solver="sql", large_table_cells=10),
    )
    expand = next(r for r in out["trace"] if r["node"] == "expand_query")["produced"]
    assert expand == {"schema_queries": ["largest b?"], "cell_queries": ["largest b?"]}


def test_expansion_can_be_switched_off(resources_factory) -> None:
    df = pd.DataFrame({"a": [str(i) for i in range(30)], "b": [str(i * 2) for i in range(30)]})
    model = ScriptedChatModel([sql_reply('SELECT MAX("b") FROM t')])
    graph = build_graph(resources_factory(model, Table("nums", df)))
    ran, _ = run_graph(
        graph,
        {"question": "largest b?", "tables": ["nums"]},
        Context(solver="sql", large_table_cells=10, expand_query=False),
    )
    assert ran == ["prepare", "retrieve_schema_cells", "solve", "answer"]


def test_table_format_reaches_the_solver_prompt(resources_factory, seasons_table) -> None:
    model = ScriptedChatModel([sql_reply('SELECT MIN("Year") FROM t')])
    graph = build_graph(resources_factory(model, seasons_table))
    run_graph(
        graph,
        {"question": "first?", "tables": ["seasons"]},
        Context(solver="sql", table_format="html"),
    )
    assert "<td>2001</td>" in model.prompts[0][-1].content


def test_a_missing_table_is_a_clear_error(resources_factory) -> None:
    import pytest

    from tablerag_agents.errors import TableLoadError

    graph = build_graph(resources_factory(ScriptedChatModel([])))
    with pytest.raises(TableLoadError, match="nope.csv"):
        graph.invoke({"question": "q?", "tables": ["nope.csv"]}, context=Context(solver="sql"))


def test_write_sentence_lets_the_model_write_the_reply(resources_factory, seasons_table) -> None:
    model = ScriptedChatModel(
        [sql_reply('SELECT MIN("Year") FROM t'), "The team's first season was 2001.\nExtra."]
    )
    graph = build_graph(resources_factory(model, seasons_table))
    ran, out = run_graph(
        graph,
        {"question": "first season?", "tables": ["seasons"]},
        Context(solver="sql", write_sentence=True),
    )
    assert model.remaining == 0
    assert out["answer"]["text"] == "2001"
    assert out["answer"]["sentence"] == "The team's first season was 2001."
    assert out["messages"][-1].content == "The team's first season was 2001."
    prompt = model.prompts[-1][-1].content
    assert "first season?" in prompt and "2001" in prompt
    assert out["trace"][-1]["input_tokens"] > 0  # the extra call is counted on the answer node


def test_a_reading_baseline_runs_in_the_graph(resources_factory, seasons_table) -> None:
    model = ScriptedChatModel(["Final Answer: 2001"])
    graph = build_graph(resources_factory(model, seasons_table))
    ran, out = run_graph(
        graph,
        {"question": "first season?", "tables": ["seasons"]},
        Context(solver="row_col_retrieval", retry_solvers=[]),
    )
    assert ran == ["prepare", "solve", "answer"]
    assert out["answer"]["text"] == "2001" and out["answer"]["solver"] == "row_col_retrieval"
