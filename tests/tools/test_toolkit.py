"""TableRAGToolkit: built from a folder, DataFrames or a saved index; owns what it creates."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from fakes import ScriptedChatModel, tool_call
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from tablerag_agents.tools import TableRAGToolkit
from tools_testdata import SAMPLES, call, fake_embeddings, wtq_tables

from tablerag_agents.resources import Resources
from tablerag_agents.retrieval.corpus import CorpusIndex
from tablerag_agents.sandbox import Sandbox, SandboxPolicy
from tablerag_agents.tables import Table, load_tables

TOOL_NAMES = [
    "search_tables",
    "describe_table",
    "retrieve_table_context",
    "filter_table",
    "clarify_terms",
    "wikipedia_summary",
    "python_sandbox",
    "sql_query",
    "ask_tables",
]


def test_from_folder_loads_every_table_and_builds_the_tools(toolkit: TableRAGToolkit) -> None:
    assert toolkit.catalog.ids() == [
        "lakes_of_turkey",
        "manzanillo_airport_routes_2013",
        "superbike_1990_season_rounds",
        "usl_a_league_team_seasons",
    ]
    tools = toolkit.get_tools("full")
    assert [t.name for t in tools] == TOOL_NAMES
    assert all(a is b for a, b in zip(tools, toolkit.get_tools("full"), strict=True))
    assert all(t.handle_tool_error is True for t in tools)
    assert all(t.response_format == "content_and_artifact" for t in tools)
    with pytest.raises(KeyError, match="search_tables"):
        toolkit.get_tool("nope")
    chosen = toolkit.get_tools(["sql_query", "python_sandbox"])
    assert [t.name for t in chosen] == ["sql_query", "python_sandbox"]
    assert chosen[0] is tools[TOOL_NAMES.index("sql_query")]
    with pytest.raises(KeyError, match="no tool set 'all'"):
        toolkit.get_tools("all")


def test_the_default_tool_set_is_small(toolkit: TableRAGToolkit) -> None:
    # One tool for a small model: ask_tables finds the table itself, however many there are.
    assert [t.name for t in toolkit.get_tools()] == ["ask_tables"]
    assert toolkit.get_tools("small") == toolkit.get_tools()
    many = {f"t{i}": pd.DataFrame({"a": [i]}) for i in range(11)}
    with TableRAGToolkit.from_dataframes(many, embeddings=fake_embeddings()) as kit:
        assert [t.name for t in kit.get_tools()] == ["ask_tables"]


def test_from_dataframes_dict_and_list() -> None:
    df = pd.DataFrame({"a": [1, 2]})
    with TableRAGToolkit.from_dataframes({"sales": df}, embeddings=fake_embeddings()) as kit:
        assert kit.catalog.ids() == ["sales"]
    with TableRAGToolkit.from_dataframes(
        [df, Table("named", df, caption="Named")], embeddings=fake_embeddings()
    ) as kit:
        assert kit.catalog.ids() == ["table_1", "named"]
    with pytest.raises(ValueError, match="duplicate table id"):
        TableRAGToolkit.from_dataframes([Table("x", df), Table("x", df)])
    with pytest.raises(FileNotFoundError):
        TableRAGToolkit.from_folder("/nonexistent/tables")


def test_from_index_uses_the_corpus_tables(tmp_path: Path) -> None:
    tables = [*wtq_tables(), *load_tables(SAMPLES)]
    CorpusIndex.build(tables, fake_embeddings(), path=tmp_path / "index", progress=False)
    with TableRAGToolkit.from_index(tmp_path / "index", embeddings=fake_embeddings()) as kit:
        assert sorted(kit.catalog.ids()) == sorted(t.id for t in tables)
        described = kit.get_tool("describe_table").invoke(
            {"table": "wtq_203_128", "sample_rows": 1}
        )
        assert "Size: 2 rows x 5 columns" in described
        hits = call(kit.get_tool("search_tables"), query="glyph")
        assert hits.artifact[0]["table_id"] == "wtq_203_128"
        rows = call(
            kit.get_tool("sql_query"), query="SELECT name FROM wtq_203_128", tables=["wtq_203_128"]
        )
        assert rows.artifact["records"] == [{"name": "quotation-mark"}, {"name": "backslash"}]
    with pytest.raises(FileNotFoundError, match="manifest.json"):
        TableRAGToolkit.from_index(tmp_path)


def test_shared_resources_are_not_closed_by_the_toolkit() -> None:
    resources = Resources(embeddings=fake_embeddings())
    kit = TableRAGToolkit.from_tables(wtq_tables(), resources=resources)
    kit.close()
    assert resources.table_ids == ["wtq_200_0", "wtq_203_128"]
    assert resources._closed is False
    resources.close()


@pytest.mark.sandbox
def test_close_stops_the_sandbox_it_created_but_not_one_passed_in() -> None:
    policy = SandboxPolicy(max_workers=1)
    with TableRAGToolkit.from_dataframes(
        wtq_tables(), embeddings=fake_embeddings(), sandbox_policy=policy
    ) as kit:
        out = kit.get_tool("python_sandbox").invoke({"code": "len(df)"})
        assert out == "8"
        created = kit.resources.sandbox
    assert created._closed
    with Sandbox(SandboxPolicy(max_workers=1)) as mine:
        with TableRAGToolkit.from_dataframes(
            wtq_tables(), embeddings=fake_embeddings(), sandbox=mine
        ) as kit:
            assert kit.get_tool("python_sandbox").invoke({"code": "len(df)"}) == "8"
        assert not mine._closed
        assert mine.run("1 + 1").value == 2


def test_tools_work_inside_create_agent(toolkit: TableRAGToolkit) -> None:
    model = ScriptedChatModel(
        [
            tool_call("describe_table", {"table": "lakes_of_turkey", "sample_rows": 0}, "c1"),
            tool_call(
                "sql_query",
                {
                    "query": 'SELECT "Name in English" FROM lakes_of_turkey '
                    "WHERE \"Depth\" = '451 m'"
                },
                "c2",
            ),
            "Lake Van is the deepest lake (451 m).",
        ]
    )
    agent = create_agent(model, toolkit.get_tools(["describe_table", "sql_query"]))
    out = agent.invoke({"messages": [("user", "Which lake in Turkey is the deepest?")]})
    tool_messages = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [m.name for m in tool_messages] == ["describe_table", "sql_query"]
    assert tool_messages[1].artifact["records"] == [{"Name in English": "Lake Van"}]
    assert "| Lake Van |" in tool_messages[1].content
    assert out["messages"][-1].content == "Lake Van is the deepest lake (451 m)."
    bound = [t["function"]["name"] for t in model.bound_tools]
    assert bound == ["describe_table", "sql_query"]


@pytest.mark.slow
def test_real_minilm_finds_the_right_table_and_cells() -> None:
    from tablerag_agents.models import get_embeddings

    questions = {
        "Which lake in Turkey is the deepest?": "lakes_of_turkey",
        "Who won the Donington round of the 1990 superbike season?": (
            "superbike_1990_season_rounds"
        ),
        "How many passengers flew from Manzanillo to Mexico City?": (
            "manzanillo_airport_routes_2013"
        ),
    }
    with TableRAGToolkit.from_folder(SAMPLES, embeddings=get_embeddings()) as kit:
        for question, expected in questions.items():
            hits = call(kit.get_tool("search_tables"), query=question, k=2)
            assert hits.artifact[0]["table_id"] == expected, question
        context = call(
            kit.get_tool("retrieve_table_context"),
            table="lakes_of_turkey",
            question="How deep is Lake Van?",
            top_k=3,
        )
        assert "Depth" in [e["column"] for e in context.artifact["schema"]]
        cells = {(c["column"], c["value"]) for c in context.artifact["cells"]}
        assert ("Name in English", "Lake Van") in cells
