"""The filter and clarify nodes of the graph (scripted model, real filters and providers)."""

from __future__ import annotations

import gzip
import json

import pytest
from fakes import ScriptedChatModel, sql_reply
from graph_runs import run_graph
from tablerag_agents.graphs import Context, build_graph

from tablerag_agents.clarify import OfflineWikipedia


def test_semantic_filter_shows_the_relevant_rows(resources_factory, seasons_table) -> None:
    model = ScriptedChatModel([sql_reply('SELECT "Year" FROM t WHERE "Regular Season" = \'5th\'')])
    graph = build_graph(resources_factory(model, seasons_table))
    ran, out = run_graph(
        graph,
        {
            "question": "which year did they finish 5th in the USL First Division?",
            "tables": ["seasons"],
        },
        Context(solver="sql", filter="semantic"),
    )
    assert ran == ["prepare", "filter", "solve", "answer"]
    produced = next(r for r in out["trace"] if r["node"] == "filter")["produced"]["sub_tables"]
    assert produced["seasons"]["method"].startswith("semantic") and 4 in produced["seasons"]["rows"]
    prompt = model.prompts[0][-1].content
    assert "Relevant rows:" in prompt and "USL First Division" in prompt.split("Relevant rows:")[1]
    assert out["answer"]["text"] == "2005"


def test_filter_scope_table_gives_the_solver_only_the_sub_table(
    resources_factory, seasons_table
) -> None:
    model = ScriptedChatModel([sql_reply("SELECT COUNT(*) FROM t")])
    graph = build_graph(resources_factory(model, seasons_table))
    _, out = run_graph(
        graph,
        {"question": "First Division 5th season year", "tables": ["seasons"]},
        Context(solver="sql", filter="semantic", filter_scope="table", filter_rows=2),
    )
    kept = next(r for r in out["trace"] if r["node"] == "filter")["produced"]["sub_tables"]
    assert out["answer"]["text"] == str(len(kept["seasons"]["rows"]))
    assert len(kept["seasons"]["rows"]) < len(seasons_table.df)


def test_filter_min_cells_skips_small_tables(resources_factory, seasons_table) -> None:
    model = ScriptedChatModel([sql_reply('SELECT MIN("Year") FROM t')])
    graph = build_graph(resources_factory(model, seasons_table))
    _, out = run_graph(
        graph,
        {"question": "first?", "tables": ["seasons"]},
        Context(solver="sql", filter="semantic", filter_min_cells=1000),
    )
    assert next(r for r in out["trace"] if r["node"] == "filter")["produced"]["sub_tables"] == {}


@pytest.mark.sandbox
@pytest.mark.parametrize(("vote", "rows"), [("subtable", [2]), ("columns", [0, 1, 2, 3, 4])])
def test_llm_filter_votes_in_the_sandbox(resources_factory, seasons_table, vote, rows) -> None:
    pick = "```python\nresult = df[df['Year'].astype(str) == '2003'][['Year', 'League']]\n```"
    other = "```python\nresult = df[df['Year'].astype(str) == '2004'][['Year', 'League']]\n```"
    model = ScriptedChatModel(
        [pick, pick, other, sql_reply('SELECT "League" FROM t WHERE "Year" = \'2003\'')]
    )
    graph = build_graph(resources_factory(model, seasons_table))
    _, out = run_graph(
        graph,
        {"question": "which league in 2003?", "tables": ["seasons"]},
        Context(solver="sql", filter="llm", filter_samples=3, filter_vote=vote),
    )
    kept = next(r for r in out["trace"] if r["node"] == "filter")["produced"]["sub_tables"]
    assert kept["seasons"]["rows"] == rows and kept["seasons"]["columns"] == ["Year", "League"]
    assert out["answer"]["text"] == "USL A-League"


def test_pieta_filter_keeps_to_its_window_budget(
    resources_factory, seasons_table, monkeypatch
) -> None:
    pick = json.dumps({"rows": [2], "columns": ["Year", "League"]})
    model = ScriptedChatModel(
        [pick] * 5 + [sql_reply('SELECT "League" FROM t WHERE "Year" = \'2003\'')]
    )
    res = resources_factory(model, seasons_table)

    def no_model(*_args: object) -> None:
        raise AssertionError("PieTa loaded the embedding model for a table it does not cut")

    res._embeddings = None  # a small table must not make the node load the embedding model
    monkeypatch.setattr("tablerag_agents.models.get_embeddings", no_model)
    graph = build_graph(res)
    _, out = run_graph(
        graph,
        {"question": "which league in 2003?", "tables": ["seasons"]},
        Context(solver="sql", filter="pieta", pieta_max_windows=4),
    )
    kept = next(r for r in out["trace"] if r["node"] == "filter")["produced"]["sub_tables"]
    assert kept["seasons"]["rows"] == [2] and kept["seasons"]["columns"] == ["Year", "League"]
    # 5 x 5 cells: 9 windows at stride 1, 4 at stride 2; then one window on the 1 x 2 table.
    assert len(model.prompts) == 6 and out["answer"]["text"] == "USL A-League"


def _intros(tmp_path):
    path = tmp_path / "intros.jsonl.gz"
    pages = [
        {
            "title": "Portland Timbers (2001–2010)",
            "url": "u1",
            "intro": "The Portland Timbers were a soccer team. They played in the USL A-League.",
        },
        {"title": "Lake Van", "url": "u2", "intro": "Lake Van is the largest lake in Turkey."},
    ]
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for page in pages:
            f.write(json.dumps(page) + "\n")
    return OfflineWikipedia(path)


def test_clarify_adds_terms_and_wikipedia_background(
    tmp_path, resources_factory, seasons_table
) -> None:
    model = ScriptedChatModel(
        [
            '{"USL": "United Soccer Leagues, a soccer league organisation", "NBA": "basketball"}',
            sql_reply('SELECT MIN("Year") FROM t'),
        ]
    )
    res = resources_factory(model, seasons_table)
    res._wikipedia = _intros(tmp_path)
    seasons_table.caption = "Portland Timbers (2001–2010)"
    graph = build_graph(res)
    ran, out = run_graph(
        graph,
        {"question": "first USL season?", "tables": ["seasons"]},
        Context(solver="sql", clarify_terms=True, wikipedia=True),
    )
    assert ran == ["prepare", "clarify", "solve", "answer"]
    solver_prompt = model.prompts[1][-1].content
    assert "United Soccer Leagues" in solver_prompt and "basketball" not in solver_prompt
    assert "The Portland Timbers were a soccer team" in solver_prompt
    clarify = next(r for r in out["trace"] if r["node"] == "clarify")["produced"]
    assert clarify["wiki"]["title"] == "Portland Timbers (2001–2010)"


def test_wikipedia_alone_asks_no_model(tmp_path, resources_factory, seasons_table) -> None:
    model = ScriptedChatModel([sql_reply('SELECT MIN("Year") FROM t')])
    res = resources_factory(model, seasons_table)
    res._wikipedia = _intros(tmp_path)
    graph = build_graph(res)
    ran, out = run_graph(
        graph,
        {"question": "first season?", "tables": ["seasons"]},
        Context(solver="sql", wikipedia=True),
    )
    assert ran == ["prepare", "clarify", "solve", "answer"] and len(model.prompts) == 1
