"""Every tool reports a failed call as a ToolMessage with ``status="error"``.

Bad arguments, unknown tables, engine errors (a misconfigured model), code
errors and time limits alike, so an agent's retry middleware sees each of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes import ScriptedChatModel, sql_reply
from langchain_core.messages import ToolMessage
from tablerag_agents.graphs import Context
from tablerag_agents.tools import SQLQueryTool, TableRAGToolkit
from tools_testdata import SAMPLES, call, fake_embeddings

from tablerag_agents.config import Settings
from tablerag_agents.sandbox import SandboxPolicy

ALL_TOOLS = {
    "search_tables",
    "describe_table",
    "retrieve_table_context",
    "filter_table",
    "clarify_terms",
    "wikipedia_summary",
    "python_sandbox",
    "sql_query",
    "ask_tables",
}

#: One call per tool missing a required argument.
INVALID_ARGS: dict[str, dict[str, Any]] = {
    "search_tables": {"k": 3},
    "describe_table": {"sample_rows": 2},
    "retrieve_table_context": {"table": "lakes_of_turkey"},
    "filter_table": {"question": "deepest lake?"},
    "clarify_terms": {"table": "lakes_of_turkey"},
    "wikipedia_summary": {"max_chars": 200},
    "python_sandbox": {"tables": ["lakes_of_turkey"]},
    "sql_query": {"tables": ["lakes_of_turkey"]},
    "ask_tables": {"tables": ["lakes_of_turkey"]},
}

#: One call per tool naming a table that does not exist (a host path, even).
UNKNOWN_TABLE: dict[str, dict[str, Any]] = {
    "search_tables": {"query": "lake"},  # see test_search_with_broken_embeddings
    "describe_table": {"table": "/etc/passwd"},
    "retrieve_table_context": {"table": "lakes", "question": "How deep?"},
    "filter_table": {"table": "lakes", "question": "How deep?"},
    "clarify_terms": {"question": "What is GP?", "table": "lakes"},
    "wikipedia_summary": {"table": "lakes"},
    "python_sandbox": {"code": "len(df)", "tables": ["lakes"]},
    "sql_query": {"query": "SELECT 1", "tables": ["lakes"]},
    "ask_tables": {"question": "How deep is Lake Van?", "tables": ["lakes"]},
}


@pytest.fixture
def broken(tmp_path: Path) -> Iterator[TableRAGToolkit]:
    """A toolkit whose embeddings and chat model are misconfigured (typed ModelErrors)."""
    settings = Settings(
        embeddings=str(tmp_path / "no-such-model"),
        chat_model="nosuchprovider:model",
        cache_dir=tmp_path,
        llm_cache=False,
        wikipedia="off",
    )
    with TableRAGToolkit.from_folder(
        SAMPLES, settings=settings, sandbox_policy=SandboxPolicy(max_workers=1)
    ) as kit:
        yield kit


def test_the_cases_cover_every_tool(broken: TableRAGToolkit) -> None:
    names = {t.name for t in broken.get_tools("full")}
    assert names == ALL_TOOLS == INVALID_ARGS.keys() == UNKNOWN_TABLE.keys()


@pytest.mark.parametrize("name", sorted(INVALID_ARGS))
def test_invalid_arguments_are_an_error(broken: TableRAGToolkit, name: str) -> None:
    message = call(broken.get_tool(name), **INVALID_ARGS[name])
    assert message.status == "error"
    assert str(message.content).startswith("Invalid arguments: ")


@pytest.mark.parametrize("name", sorted(set(UNKNOWN_TABLE) - {"search_tables"}))
def test_unknown_table_is_an_error_naming_the_real_ones(broken: TableRAGToolkit, name: str) -> None:
    message = call(broken.get_tool(name), **UNKNOWN_TABLE[name])
    assert message.status == "error", message.content
    assert "lakes_of_turkey" in str(message.content)
    assert message.artifact is None


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("search_tables", {"query": "lake"}, "unknown embeddings"),
        (
            "retrieve_table_context",
            {"table": "lakes_of_turkey", "question": "How deep?"},
            "retrieve_table_context failed (ModelError): unknown embeddings",
        ),
        (
            "filter_table",
            {"table": "lakes_of_turkey", "question": "How deep?"},
            "filter_table failed (ModelError): unknown embeddings",
        ),
        (
            "clarify_terms",
            {"question": "What is GP?"},
            "clarify_terms failed (ModelError): cannot create chat model 'nosuchprovider:model'",
        ),
        ("wikipedia_summary", {"topic": "Lake Van"}, "switched off"),
        ("ask_tables", {"question": "How deep is Lake Van?"}, "unknown embeddings"),
    ],
)
def test_engine_errors_are_tool_errors(
    broken: TableRAGToolkit, name: str, args: dict[str, Any], expected: str
) -> None:
    message = call(broken.get_tool(name), **args)
    assert message.status == "error"
    assert expected in str(message.content)


def test_sql_errors_and_timeouts_are_errors(broken: TableRAGToolkit) -> None:
    tool = broken.get_tool("sql_query")
    bad = call(tool, query='SELECT "Height" FROM lakes_of_turkey', tables=["lakes_of_turkey"])
    assert bad.status == "error" and '"Name in English"' in str(bad.content)
    slow = SQLQueryTool(catalog=broken.catalog, timeout_s=0.2)
    message = call(slow, query="SELECT count(*) FROM range(100000000000) a")
    assert message.status == "error"
    assert "time limit" in str(message.content)


def test_ask_tables_whose_solvers_all_fail_is_an_error(tmp_path: Path) -> None:
    model = ScriptedChatModel([sql_reply('SELECT "Height" FROM t')] * 10)
    with TableRAGToolkit.from_folder(
        SAMPLES,
        chat_model=model,
        embeddings=fake_embeddings(),
        settings=Settings(cache_dir=tmp_path, llm_cache=False),
        ask_context=Context(solver="sql", retry_solvers=[]),
    ) as kit:
        message = call(kit.get_tool("ask_tables"), question="How tall?", tables=["lakes_of_turkey"])
    assert message.status == "error"
    assert str(message.content).startswith("no answer: the sql solver failed: ")
    assert "Height" in str(message.content)


@pytest.mark.sandbox
def test_python_code_errors_and_timeouts_are_errors() -> None:
    policy = SandboxPolicy(timeout_s=1.0, max_workers=1, acquire_timeout_s=30)
    with TableRAGToolkit.from_folder(
        SAMPLES, embeddings=fake_embeddings(), sandbox_policy=policy
    ) as kit:
        tool = kit.get_tool("python_sandbox")

        def run(code: str) -> ToolMessage:
            message = tool.invoke(
                {"type": "tool_call", "id": "c", "name": tool.name, "args": {"code": code}},
                {"configurable": {"thread_id": "errors"}},
            )
            assert isinstance(message, ToolMessage)
            return message

        assert run("kept = 2").status == "success"
        error = run("df['Height'].max()")
        assert error.status == "error"
        assert str(error.content).startswith("Error:") and "KeyError: 'Height'" in error.content
        slow = run("while True:\n    pass")
        assert slow.status == "error" and "TimeoutError" in str(slow.content)
        assert run("kept * 21").content == "42"  # the conversation goes on
