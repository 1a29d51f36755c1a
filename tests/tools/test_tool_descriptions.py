"""Tool descriptions quote the registered tables' real ids, columns and values, and nothing else."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from tablerag_agents.tools import TableRAGToolkit
from tablerag_agents.tools._examples import DataExamples
from tools_testdata import SAMPLES, call, fake_embeddings, wtq_tables

from tablerag_agents.sandbox import SandboxPolicy


def schema_text(tool: BaseTool) -> str:
    """Everything the model reads about a tool: its name, description and argument schema."""
    return json.dumps(convert_to_openai_tool(tool)["function"], ensure_ascii=False)


def test_descriptions_quote_the_registered_tables_only() -> None:
    with TableRAGToolkit.from_tables(wtq_tables(), embeddings=fake_embeddings()) as kit:
        tools = kit.get_tools("full")
        text = "\n".join(schema_text(t) for t in tools)
        examples = tools[0].examples
    assert examples is not None and examples.table_id == "wtq_200_0"
    for absent in ("lakes_of_turkey", "Lake Van", "Depth", "Turkey", "Superbike"):
        assert absent not in text, absent
    assert "E.g. 'wtq_200_0'." in text
    assert "The tables: wtq_200_0, wtq_203_128." in schema_text(kit.get_tool("describe_table"))
    df = wtq_tables()[0].df
    assert examples.label_column in df.columns and examples.value_column in df.columns
    row = df[df[examples.label_column].astype(str) == examples.label_value]
    assert examples.value in row[examples.value_column].astype(str).tolist()


def test_the_sql_example_runs_and_returns_the_quoted_value() -> None:
    with TableRAGToolkit.from_folder(SAMPLES, embeddings=fake_embeddings()) as kit:
        sql = kit.get_tool("sql_query")
        query = sql.args_schema.model_json_schema()["properties"]["query"]["description"]
        example = query.split("Example: ", 1)[1]
        assert example == (
            'SELECT "Area (km2)" FROM lakes_of_turkey WHERE "Name in English" = \'Lake Van\''
        )
        result = call(sql, query=example)
    assert result.status == "success"
    assert result.artifact["records"] == [{"Area (km2)": "3755 km2"}]


@pytest.mark.sandbox
def test_the_python_example_runs_and_returns_the_quoted_value() -> None:
    policy = SandboxPolicy(max_workers=1, acquire_timeout_s=30)
    with TableRAGToolkit.from_folder(
        SAMPLES, embeddings=fake_embeddings(), sandbox_policy=policy
    ) as kit:
        tool = kit.get_tool("python_sandbox")
        code = tool.args_schema.model_json_schema()["properties"]["code"]["description"]
        example = code.split("Example: ", 1)[1]
        result = call(tool, code=f"{example}.tolist()")
    assert result.status == "success"
    assert result.artifact["value"] == ["3755 km2"]


def test_quotes_in_values_are_escaped_in_the_examples() -> None:
    df = pd.DataFrame({"name": ["O'Hare", "Heathrow"], "passengers": [80, 79]})
    with TableRAGToolkit.from_dataframes({"airports": df}, embeddings=fake_embeddings()) as kit:
        examples = kit.get_tool("sql_query").examples
        assert examples is not None
        assert examples.sql() == ("SELECT \"passengers\" FROM airports WHERE \"name\" = 'O''Hare'")
        result = call(kit.get_tool("sql_query"), query=examples.sql())
    assert result.artifact["records"] == [{"passengers": 80}]
    assert examples.python() == "airports.loc[airports['name'] == \"O'Hare\", 'passengers']"


def test_without_usable_tables_there_are_no_examples() -> None:
    one_column = pd.DataFrame({"only": ["x"]})
    with TableRAGToolkit.from_dataframes({"t": one_column}, embeddings=fake_embeddings()) as kit:
        assert DataExamples.from_catalog(kit.catalog) is None
        text = "\n".join(schema_text(t) for t in kit.get_tools("full"))
    assert "E.g." not in text and "Example:" not in text
    with TableRAGToolkit.from_tables([], embeddings=fake_embeddings()) as kit:
        assert [t.name for t in kit.get_tools()] == ["ask_tables"]
