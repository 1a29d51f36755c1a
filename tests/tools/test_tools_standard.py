"""langchain-tests standard suites for every tool of the toolkit (real tables, offline)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests
from tablerag_agents.tools import TableRAGToolkit
from tools_testdata import SAMPLES, fake_embeddings

from tablerag_agents.sandbox import SandboxPolicy

_KIT: list[TableRAGToolkit] = []


def _tool(name: str) -> BaseTool:
    """A tool of the module's toolkit (created on first use, closed at module end)."""
    if not _KIT:
        policy = SandboxPolicy(max_workers=2, acquire_timeout_s=30)
        _KIT.append(
            TableRAGToolkit.from_folder(
                SAMPLES, embeddings=fake_embeddings(), sandbox_policy=policy
            )
        )
    return _KIT[0].get_tool(name)


@pytest.fixture(scope="module", autouse=True)
def _close_toolkit() -> Iterator[None]:
    yield
    while _KIT:
        _KIT.pop().close()


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
