"""filter_table, clarify_terms, wikipedia_summary, ask_tables: scripted models, real tables."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from fakes import ScriptedChatModel, sql_reply
from tablerag_agents.graphs import Context
from tablerag_agents.tools import TableRAGToolkit
from tools_testdata import call, fake_embeddings, wtq_tables
from wtq_rows import seasons_frame

from tablerag_agents.config import Settings
from tablerag_agents.resources import Resources
from tablerag_agents.sandbox import Sandbox
from tablerag_agents.tables import Table

SEASONS = Table(
    "seasons",
    seasons_frame()
    .drop(columns="Division")
    .astype({"Year": int})
    .assign(**{"Avg. Attendance": [7169, 6260, 5871, 5628, 6028]}),
    caption="Portland Timbers (USL) seasons",
)


def kit_with(model: ScriptedChatModel, *tables: Table, **kwargs) -> TableRAGToolkit:
    """A toolkit whose chat model is ``model``."""
    return TableRAGToolkit.from_tables(
        tables or [SEASONS], chat_model=model, embeddings=fake_embeddings(), **kwargs
    )


def test_semantic_filter_keeps_top_rows_with_their_index() -> None:
    with kit_with(ScriptedChatModel([])) as kit:
        message = call(
            kit.get_tool("filter_table"),
            table="seasons",
            question="average attendance in 2003",
            top_rows=2,
            top_columns=2,
        )
        art = message.artifact
        assert len(art["rows"]) == 2 and len(art["columns"]) == 2 and not art["fallback"]
        assert art["method"] == "semantic:dense"
        assert message.content.startswith("Kept 2 of 5 rows and 2 of 4 columns (semantic:dense).")
        # the kept rows carry their original position, so the model can cite them
        assert [r["index"] for r in art["data"]["records"]] == art["rows"]
        json.dumps(art)


@pytest.mark.sandbox
def test_llm_filter_majority_sub_table() -> None:
    pick = "```python\nresult = df[df['Year'] == 2003][['Year', 'League']]\n```"
    other = "```python\nresult = df[df['Year'] == 2002][['Year', 'League']]\n```"
    model = ScriptedChatModel([pick, other, pick, pick, other])
    with Sandbox() as sandbox, kit_with(model, sandbox=sandbox) as kit:
        message = call(
            kit.get_tool("filter_table"),
            table="seasons",
            question="what league did they play in during 2003?",
            method="llm",
        )
    assert message.artifact["rows"] == [2] and message.artifact["columns"] == ["Year", "League"]
    assert message.content.splitlines()[-1] == "| 2 | 2003 | USL A-League |"


@pytest.mark.sandbox
def test_llm_filter_column_vote_is_a_tool_option() -> None:
    from tablerag_agents.tools.filter_table import FilterTableTool

    pick = "```python\nresult = df[df['Year'] == 2003][['Year', 'League']]\n```"
    other = "```python\nresult = df[df['Year'] == 2002][['Year', 'League']]\n```"
    model = ScriptedChatModel([pick, other, other, pick, "no code"])
    with Sandbox() as sandbox, kit_with(model, sandbox=sandbox) as kit:
        catalog = kit.get_tool("filter_table").catalog  # type: ignore[attr-defined]
        tool = FilterTableTool(catalog=catalog, vote="columns")
        message = call(tool, table="seasons", question="league in 2003?", method="llm")
    # no sub-table has a majority (2 and 2 of 4), but both columns have every vote
    assert message.artifact["rows"] == [0, 1, 2, 3, 4] and not message.artifact["fallback"]
    assert message.artifact["columns"] == ["Year", "League"]


def test_pieta_filter_without_usable_picks_keeps_the_whole_table_and_says_so() -> None:
    model = ScriptedChatModel(["I think the answer is 2003."] * 8)
    with kit_with(model) as kit:
        message = call(
            kit.get_tool("filter_table"), table="seasons", question="best season?", method="pieta"
        )
    assert message.artifact["fallback"] is True and message.artifact["method"] == "pieta"
    assert "The filter kept the whole table:" in message.content
    assert len(message.artifact["rows"]) == 5


def test_clarify_terms_explains_only_terms_that_occur() -> None:
    reply = json.dumps(
        {
            "Avg. Attendance": "mean number of spectators per home game",
            "USL": "United Soccer League",
            "MLS": "Major League Soccer",  # not in the question or headers: dropped
        }
    )
    model = ScriptedChatModel([reply])
    with kit_with(model) as kit:
        message = call(
            kit.get_tool("clarify_terms"),
            question="What was the avg. attendance when they left the USL?",
            table="seasons",
        )
    assert message.artifact == {
        "terms": {
            "Avg. Attendance": "mean number of spectators per home game",
            "USL": "United Soccer League",
        }
    }
    assert message.content.splitlines() == [
        "Avg. Attendance: mean number of spectators per home game",
        "USL: United Soccer League",
    ]
    prompt = str(model.prompts[0][-1].content)
    assert "Avg. Attendance" in prompt and "7169" not in prompt  # headers, never rows


@pytest.fixture
def wiki_settings(tmp_path: Path) -> Settings:
    """Offline Wikipedia over a three-page corpus of intros."""
    pages = [
        ("Lake Van", "Lake Van is the largest lake in Turkey. It is a saline soda lake."),
        ("Portland Timbers (2001–2010)", "The Portland Timbers were a soccer team in Oregon."),
        ("Lake Tuz", "Lake Tuz is a hypersaline lake in central Turkey."),
    ]
    path = tmp_path / "intros.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for title, intro in pages:
            url = "https://en.wikipedia.org/wiki/" + title.replace(" ", "_")
            fh.write(json.dumps({"title": title, "url": url, "intro": intro}) + "\n")
    return Settings(wikipedia="offline", wiki_intros=path, cache_dir=tmp_path / "cache")


@pytest.fixture
def wiki_kit(wiki_settings: Settings) -> Iterator[TableRAGToolkit]:
    lakes = Table("lakes", pd.DataFrame({"Lake": ["Van", "Tuz"], "Depth": [451, 2]}), "Lake Van")
    with TableRAGToolkit.from_tables(
        [SEASONS, lakes], settings=wiki_settings, embeddings=fake_embeddings()
    ) as kit:
        yield kit


def test_wikipedia_summary_of_a_topic_from_the_offline_corpus(wiki_kit: TableRAGToolkit) -> None:
    message = call(wiki_kit.get_tool("wikipedia_summary"), topic="Lake Van")
    assert message.artifact == {
        "title": "Lake Van",
        "url": "https://en.wikipedia.org/wiki/Lake_Van",
        "text": "Lake Van is the largest lake in Turkey. It is a saline soda lake.",
    }
    assert message.content.startswith("Lake Van (https://en.wikipedia.org/wiki/Lake_Van):\n")


def test_wikipedia_summary_of_a_table_uses_its_caption(wiki_kit: TableRAGToolkit) -> None:
    message = call(wiki_kit.get_tool("wikipedia_summary"), table="lakes", max_chars=100)
    assert message.artifact["title"] == "Lake Van"


def test_wikipedia_summary_not_found_and_bad_arguments(wiki_kit: TableRAGToolkit) -> None:
    tool = wiki_kit.get_tool("wikipedia_summary")
    message = call(tool, topic="Quantum chromodynamics")
    assert message.status == "error" and "no Wikipedia page found for 'Quantum" in message.content
    message = call(tool)  # neither topic nor table
    assert message.status == "error"
    assert message.content == "Invalid arguments: give a topic or a table id"
    assert "no table 'lake'" in call(tool, table="lake").content


def test_wikipedia_switched_off() -> None:
    with TableRAGToolkit.from_tables(
        [SEASONS], settings=Settings(wikipedia="off"), embeddings=fake_embeddings()
    ) as kit:
        message = call(kit.get_tool("wikipedia_summary"), topic="Lake Van")
    assert message.status == "error" and "switched off" in message.content


def test_ask_tables_answers_with_cited_cells() -> None:
    model = ScriptedChatModel([sql_reply('SELECT MIN("Year") FROM t')])
    with kit_with(model, SEASONS, *wtq_tables(), ask_context=Context(solver="sql")) as kit:
        message = call(kit.get_tool("ask_tables"), question="first season?", tables=["seasons"])
    answer = message.artifact
    json.dumps(answer)
    assert answer["text"] == "2001" and answer["table_ids"] == ["seasons"]
    assert answer["cited_cells"][0] == {
        "table": "seasons",
        "row": 0,
        "column": "Year",
        "value": "2001",
    }
    lines = message.content.splitlines()
    assert lines[0] == "Answer: 2001"
    assert lines[-1] == "Cited cells: seasons row 0 'Year' = '2001'"


def test_ask_tables_refuses_unknown_tables_and_file_paths() -> None:
    with kit_with(ScriptedChatModel([])) as kit:
        tool = kit.get_tool("ask_tables")
        for ref in ("season", "/etc/passwd"):
            message = call(tool, question="first season?", tables=[ref])
            assert message.status == "error" and "the tables are: seasons" in message.content


def test_ask_tables_shares_the_toolkit_resources() -> None:
    resources = Resources(chat_model=ScriptedChatModel([]), embeddings=fake_embeddings())
    with TableRAGToolkit.from_tables([SEASONS], resources=resources) as kit:
        graph = kit.get_tool("ask_tables")._compiled()
        assert graph is kit.get_tool("ask_tables")._compiled()
        assert kit.resources is resources
    resources.close()
