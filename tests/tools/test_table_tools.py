"""Tools without the sandbox: wrong names, compact text, JSON artifacts, SQL safety."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest
from langchain_core.tools import ToolException
from tablerag_agents.tools import SearchTablesTool, TableRAGToolkit
from tools_testdata import call, fake_embeddings, wtq_tables

from tablerag_agents.models.tokens import count_tokens
from tablerag_agents.tables import Table

SAMPLE_IDS = [
    "lakes_of_turkey",
    "manzanillo_airport_routes_2013",
    "superbike_1990_season_rounds",
    "usl_a_league_team_seasons",
]


@pytest.mark.parametrize(
    ("tool_name", "args"),
    [
        ("describe_table", {"table": "lakes"}),
        ("retrieve_table_context", {"table": "lakes", "question": "deepest lake?"}),
        ("sql_query", {"query": "SELECT 1", "tables": ["lakes"]}),
    ],
)
def test_wrong_table_name_lists_the_real_ones(
    toolkit: TableRAGToolkit, tool_name: str, args: dict[str, Any]
) -> None:
    message = call(toolkit.get_tool(tool_name), **args)
    assert message.status == "error"
    assert "no table 'lakes'" in message.content
    for table_id in SAMPLE_IDS:
        assert table_id in message.content
    with pytest.raises(ToolException, match="lakes_of_turkey"):
        toolkit.catalog.get("lakes")


def test_wrong_name_in_a_large_catalog_suggests_close_ids_and_search() -> None:
    frames = {f"city_{i:02d}": pd.DataFrame({"x": [i]}) for i in range(40)}
    with TableRAGToolkit.from_dataframes(frames, embeddings=fake_embeddings()) as kit:
        message = call(kit.get_tool("describe_table"), table="city_7")
        assert message.status == "error"
        assert "among 40 tables" in message.content and "search_tables" in message.content
        assert "city_07" in message.content  # the closest id is suggested
        # Code tools need explicit ids when there are many tables.
        message = call(kit.get_tool("sql_query"), query="SELECT 1")
        assert message.status == "error" and "pass `tables`" in message.content


def test_describe_table_is_compact_text_with_the_data_as_artifact(
    toolkit: TableRAGToolkit,
) -> None:
    message = call(toolkit.get_tool("describe_table"), table="lakes_of_turkey", sample_rows=2)
    text = message.content
    assert "Size: 50 rows x 5 columns" in text
    assert "- 'Depth': text, 7 distinct, 43 missing" in text
    assert "| Lake Van | Van Gölü | 3755 km2 | 451 m |" in text
    assert "Lake Beyşehir" not in text  # only two sample rows
    art = message.artifact
    json.dumps(art)
    assert art["n_rows"] == 50 and art["variable"] == "lakes_of_turkey"
    assert [c["name"] for c in art["columns"]][:2] == ["Name in English", "Name in Turkish"]
    assert art["sample"]["records"][1]["Name in English"] == "Lake Tuz"


def test_non_identifier_ids_get_a_variable_name_usable_in_sql() -> None:
    seasons = Table(
        "204-csv/590", pd.DataFrame({"Year": [2001, 2002], "Avg. Attendance": [7169, 6260]})
    )
    with TableRAGToolkit.from_dataframes([seasons], embeddings=fake_embeddings()) as kit:
        described = call(kit.get_tool("describe_table"), table="204-csv/590")
        assert "`t_204_csv_590`" in described.content
        message = call(
            kit.get_tool("sql_query"),
            query='SELECT MAX("Avg. Attendance") AS best FROM t_204_csv_590',
        )
        assert message.status == "success"
        assert message.artifact["records"] == [{"best": 7169}]


def test_sql_query_text_is_a_short_table_and_artifact_the_rows(toolkit: TableRAGToolkit) -> None:
    tool = toolkit.get_tool("sql_query")
    message = call(
        tool,
        query='SELECT "Name in English" AS lake, "Depth" FROM lakes_of_turkey '
        'WHERE "Depth" IS NOT NULL ORDER BY lake',
        tables=["lakes_of_turkey"],
    )
    df = toolkit.catalog.get("lakes_of_turkey").df
    expected = sorted(df.loc[df["Depth"].notna(), "Name in English"])
    assert [r["lake"] for r in message.artifact["records"]] == expected
    assert message.content.splitlines()[0] == "| lake | Depth |"
    assert len(message.content.splitlines()) == 2 + len(expected)


def test_sql_query_caps_rows_and_says_so(toolkit: TableRAGToolkit) -> None:
    tool = toolkit.get_tool("sql_query")
    message = call(tool, query="SELECT * FROM range(1000) t(i)", tables=["lakes_of_turkey"])
    assert message.artifact["truncated"] is True
    assert message.artifact["n_rows"] == 200  # the engine's row cap
    assert len(message.content.splitlines()) < 30
    assert "[result cut at 200 rows" in message.content


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("SELECT * FROM read_text('/etc/passwd')", "disabled by configuration"),
        ("SELECT * FROM read_csv('/etc/passwd')", "disabled by configuration"),
        ("ATTACH '/tmp/x.duckdb' AS x", "only SELECT"),
        ("INSTALL httpfs", "only SELECT"),
        ("SET enable_external_access = true", "only SELECT"),
        ("SELECT 1; SELECT 2", "expected one statement"),
    ],
)
def test_sql_query_refuses_files_attach_and_settings(
    toolkit: TableRAGToolkit, query: str, reason: str
) -> None:
    message = call(toolkit.get_tool("sql_query"), query=query, tables=["lakes_of_turkey"])
    assert message.status == "error"
    assert reason in message.content
    assert "root:" not in message.content


def test_sql_query_wrong_column_lists_the_real_columns(toolkit: TableRAGToolkit) -> None:
    message = call(
        toolkit.get_tool("sql_query"),
        query='SELECT "Depth (m)" FROM lakes_of_turkey',
        tables=["lakes_of_turkey"],
    )
    assert message.status == "error"
    assert '- lakes_of_turkey: "Name in English", "Name in Turkish", "Area (km2)", "Depth"' in (
        message.content
    )


def test_sql_query_quotes_bare_column_names_with_spaces(toolkit: TableRAGToolkit) -> None:
    # The embedded model wrote "SELECT Top scorer (League) FROM ..." on the agent bench.
    message = call(
        toolkit.get_tool("sql_query"),
        query="SELECT Name in English FROM lakes_of_turkey WHERE Name in Turkish = 'Van Gölü'",
        tables=["lakes_of_turkey"],
    )
    assert message.status == "success"
    assert message.artifact["records"] == [{"Name in English": "Lake Van"}]
    assert message.artifact["query"].startswith('SELECT "Name in English" FROM')
    assert message.content.startswith("(ran with the column names quoted: ")


def test_search_tables_returns_ids_titles_columns_and_scores(toolkit: TableRAGToolkit) -> None:
    tool = SearchTablesTool(catalog=toolkit.catalog, method="bm25_fields")
    message = call(tool, query="Manzanillo airport passengers by city or lake", k=3)
    hits = message.artifact
    json.dumps(hits)
    assert [h["table_id"] for h in hits][0] == "manzanillo_airport_routes_2013"
    assert hits[0]["columns"] == ["Rank", "City", "Passengers", "Ranking", "Airline"]
    assert hits[1]["table_id"] == "lakes_of_turkey" and hits[0]["score"] >= hits[1]["score"]
    first = message.content.splitlines()[0]
    assert first.startswith("1. id='manzanillo_airport_routes_2013'")
    assert "columns: Rank, City, Passengers, Ranking, Airline" in first


def test_retrieve_table_context_stays_small_for_a_big_table_and_is_cached() -> None:
    rng = np.random.default_rng(0)
    n = 20_000
    big = pd.DataFrame(
        {
            "station": [f"station {i % 3000}" for i in range(n)],
            "country": rng.choice(["Peru", "Chile", "Bolivia"], n),
            "rainfall_mm": rng.integers(0, 3000, n),
            "year": rng.integers(1950, 2020, n),
        }
    )
    with TableRAGToolkit.from_dataframes(
        [Table("rain", big, caption="Rainfall")], embeddings=fake_embeddings()
    ) as kit:
        tool = kit.get_tool("retrieve_table_context")
        message = call(tool, table="rain", question="rainfall of station 17 in Peru", top_k=5)
        assert "Size: 20000 rows x 4 columns" in message.content
        assert count_tokens(message.content) < 600  # 80,000 cells, a bounded context
        assert message.artifact["context"] == message.content
        assert {e["column"] for e in message.artifact["schema"]} <= set(big.columns)
        assert all(c["column"] in big.columns for c in message.artifact["cells"])
        index = kit.catalog.table_index(kit.catalog.get("rain"), tool.budget)
        call(tool, table="rain", question="which year", keywords=["year"])
        assert kit.catalog.table_index(kit.catalog.get("rain"), tool.budget) is index


def test_wtq_tables_from_test_data(toolkit: TableRAGToolkit) -> None:
    with TableRAGToolkit.from_dataframes(wtq_tables(), embeddings=fake_embeddings()) as kit:
        message = call(
            kit.get_tool("sql_query"),
            query='SELECT "Title" FROM wtq_200_0 WHERE "Chart-Positions UK" = \'60\'',
        )
        assert message.artifact["records"] == [{"Title": "Renaissance"}]


def test_a_table_replaced_under_its_id_gets_a_fresh_index() -> None:
    """The tools' per-table indexes are keyed by content, not id: no stale cells."""
    old = pd.DataFrame({"city": ["Lima", "Cusco"], "rain": ["12", "700"]})
    new = pd.DataFrame({"city": ["Arequipa", "Puno"], "rain": ["80", "610"]})
    with TableRAGToolkit.from_dataframes({"rain": old}, embeddings=fake_embeddings()) as kit:
        tool = kit.get_tool("retrieve_table_context")
        before = call(tool, table="rain", question="rain in Lima")
        assert {c["value"] for c in before.artifact["cells"]} >= {"Lima", "Cusco"}
        kit.resources.add_table(Table("rain", new, caption="rain"))
        after = call(tool, table="rain", question="rain in Lima")
        values = {c["value"] for c in after.artifact["cells"]}
        assert values >= {"Arequipa", "Puno"} and not values & {"Lima", "Cusco"}
        assert kit.catalog.table_index(kit.catalog.get("rain"), tool.budget) is (
            kit.resources.table_index(kit.catalog.get("rain"), budget=tool.budget)
        )  # one cache: the graph and the tools share it
