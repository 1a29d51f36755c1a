"""langchain-tests standard suites for every tool of the toolkit (real tables, offline)."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes import ScriptedChatModel
from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests
from tablerag_agents.graphs import Context
from tablerag_agents.tools import TableRAGToolkit
from tools_testdata import SAMPLES, fake_embeddings

from tablerag_agents.config import Settings
from tablerag_agents.sandbox import SandboxPolicy

_KITS: dict[str, TableRAGToolkit] = {}
_TMP: list[Path] = []

#: Scripted replies of the chat model, per tool that needs one (each call uses one).
REPLIES = {
    "clarify_terms": json.dumps({"km2": "square kilometres"}),
    "ask_tables": '```sql\nSELECT "Name in English" FROM t WHERE "Depth" = \'451 m\'\n```',
}


def _wiki_settings() -> Settings:
    """Offline Wikipedia over a one-page corpus in a temporary folder."""
    folder = Path(tempfile.mkdtemp(prefix="tablerag-wiki-"))
    _TMP.append(folder)
    intro = {
        "title": "Lake Van",
        "url": "https://en.wikipedia.org/wiki/Lake_Van",
        "intro": "Lake Van is the largest lake in Turkey.",
    }
    (folder / "intros.jsonl").write_text(json.dumps(intro) + "\n", encoding="utf-8")
    return Settings(wikipedia="offline", wiki_intros=folder / "intros.jsonl", cache_dir=folder)


def _tool(name: str) -> BaseTool:
    """The tool ``name`` of its own toolkit (created on first use, closed at module end)."""
    if name not in _KITS:
        model = ScriptedChatModel([REPLIES.get(name, "no reply expected")] * 20)
        _KITS[name] = TableRAGToolkit.from_folder(
            SAMPLES,
            chat_model=model,
            embeddings=fake_embeddings(),
            settings=_wiki_settings() if name == "wikipedia_summary" else None,
            sandbox_policy=SandboxPolicy(max_workers=2, acquire_timeout_s=30),
            ask_context=Context(solver="sql", retry_solvers=[]),
        )
    return _KITS[name].get_tool(name)


@pytest.fixture(scope="module", autouse=True)
def _close_toolkits() -> Iterator[None]:
    yield
    for kit in _KITS.values():
        kit.close()
    _KITS.clear()
    for folder in _TMP:
        shutil.rmtree(folder, ignore_errors=True)


EXAMPLES: dict[str, dict[str, Any]] = {
    "search_tables": {"query": "deepest lake in Turkey", "k": 3},
    "describe_table": {"table": "lakes_of_turkey", "sample_rows": 3},
    "retrieve_table_context": {
        "table": "lakes_of_turkey",
        "question": "How deep is Lake Van?",
        "keywords": ["depth"],
    },
    "sql_query": {"query": 'SELECT "Name in English" FROM lakes_of_turkey LIMIT 2'},
    "python_sandbox": {"code": "df['Depth'].dropna().head(3)", "tables": ["lakes_of_turkey"]},
    "filter_table": {
        "table": "lakes_of_turkey",
        "question": "How deep is Lake Van?",
        "top_rows": 3,
    },
    "clarify_terms": {"question": "Which lake has the largest area in km2?"},
    "wikipedia_summary": {"topic": "Lake Van"},
    "ask_tables": {"question": "Which lake is 451 m deep?", "tables": ["lakes_of_turkey"]},
}


class _Standard:
    tool_name = ""

    @property
    def tool_constructor(self) -> BaseTool:
        return _tool(self.tool_name)

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return EXAMPLES[self.tool_name]


class TestSearchTablesUnit(_Standard, ToolsUnitTests):
    tool_name = "search_tables"


class TestSearchTablesIntegration(_Standard, ToolsIntegrationTests):
    tool_name = "search_tables"


class TestDescribeTableUnit(_Standard, ToolsUnitTests):
    tool_name = "describe_table"


class TestDescribeTableIntegration(_Standard, ToolsIntegrationTests):
    tool_name = "describe_table"


class TestRetrieveTableContextUnit(_Standard, ToolsUnitTests):
    tool_name = "retrieve_table_context"


class TestRetrieveTableContextIntegration(_Standard, ToolsIntegrationTests):
    tool_name = "retrieve_table_context"


class TestSQLQueryUnit(_Standard, ToolsUnitTests):
    tool_name = "sql_query"


class TestSQLQueryIntegration(_Standard, ToolsIntegrationTests):
    tool_name = "sql_query"


@pytest.mark.sandbox
class TestPythonSandboxUnit(_Standard, ToolsUnitTests):
    tool_name = "python_sandbox"


@pytest.mark.sandbox
class TestPythonSandboxIntegration(_Standard, ToolsIntegrationTests):
    tool_name = "python_sandbox"


class TestFilterTableUnit(_Standard, ToolsUnitTests):
    tool_name = "filter_table"


class TestFilterTableIntegration(_Standard, ToolsIntegrationTests):
    tool_name = "filter_table"


class TestClarifyTermsUnit(_Standard, ToolsUnitTests):
    tool_name = "clarify_terms"


class TestClarifyTermsIntegration(_Standard, ToolsIntegrationTests):
    tool_name = "clarify_terms"


class TestWikipediaSummaryUnit(_Standard, ToolsUnitTests):
    tool_name = "wikipedia_summary"


class TestWikipediaSummaryIntegration(_Standard, ToolsIntegrationTests):
    tool_name = "wikipedia_summary"


class TestAskTablesUnit(_Standard, ToolsUnitTests):
    tool_name = "ask_tables"


class TestAskTablesIntegration(_Standard, ToolsIntegrationTests):
    tool_name = "ask_tables"
