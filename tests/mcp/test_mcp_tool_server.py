"""ToolServer: the toolkit's tools over MCP, tested in memory with the SDK's client session."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes import ScriptedChatModel
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.tools import BaseTool
from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session
from mcp_testdata import table_folder
from PIL import Image
from tablerag_agents.tools import TableRAGToolkit

from tablerag_agents.config import Settings
from tablerag_agents.mcp_server import ToolServer
from tablerag_agents.sandbox import Sandbox, SandboxPolicy
from tablerag_agents.solve.chart_image import PNG_SIGNATURE


@pytest.fixture
def toolkit(tmp_path: Path) -> Iterator[TableRAGToolkit]:
    """The toolkit over the one-table folder (fake embeddings, a one-worker sandbox)."""
    with TableRAGToolkit.from_folder(
        table_folder(tmp_path),
        embeddings=DeterministicFakeEmbedding(size=32),
        settings=Settings(cache_dir=tmp_path, llm_cache=False),
        sandbox_policy=SandboxPolicy(max_workers=1, acquire_timeout_s=30),
    ) as kit:
        yield kit


def text(result: Any) -> str:
    """The text of a tool result's single content block."""
    [block] = result.content
    return str(block.text)


async def test_tools_are_listed_with_descriptions_from_the_tables(
    toolkit: TableRAGToolkit,
) -> None:
    server = ToolServer(toolkit.get_tools("full")).server
    async with create_connected_server_and_client_session(server) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert list(listed) == [t.name for t in toolkit.get_tools("full")]
    describe = listed["describe_table"]
    assert describe.description is not None and describe.description.endswith("The tables: lakes.")
    assert describe.inputSchema["required"] == ["table"]
    query = listed["sql_query"].inputSchema["properties"]["query"]["description"]
    assert query.endswith("""Example: SELECT "Area (km2)" FROM lakes WHERE "Name" = 'Lake Van'""")


async def test_a_call_returns_the_text_and_the_artifact(toolkit: TableRAGToolkit) -> None:
    server = ToolServer(toolkit.get_tools("full")).server
    async with create_connected_server_and_client_session(server) as client:
        rows = await client.call_tool(
            "sql_query", {"query": 'SELECT "Name" FROM lakes ORDER BY "Max depth (m)" DESC LIMIT 1'}
        )
        hits = await client.call_tool("search_tables", {"query": "lake depth", "k": 1})
    assert rows.isError is False
    assert text(rows).splitlines() == ["| Name |", "|---|", "| Lake Van |"]
    assert rows.structuredContent is not None
    assert rows.structuredContent["records"] == [{"Name": "Lake Van"}]
    assert hits.structuredContent is not None  # a list artifact is wrapped in an object
    assert [hit["table_id"] for hit in hits.structuredContent["results"]] == ["lakes"]


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        (
            "describe_table",
            {"table": "/etc/passwd"},
            "no table '/etc/passwd'; the tables are: lakes",
        ),
        ("sql_query", {"query": "SELECT * FROM read_csv('/etc/passwd')"}, "SQL error"),
        ("describe_table", {}, "Invalid arguments: table: Field required"),
        ("sql_query", {"query": "SELECT 1", "tables": "lakes"}, "Invalid arguments: tables"),
        ("drop_tables", {}, "no tool 'drop_tables'; the tools are: describe_table, sql_query"),
    ],
)
async def test_failed_calls_are_mcp_tool_errors(
    toolkit: TableRAGToolkit, name: str, arguments: dict[str, Any], expected: str
) -> None:
    server = ToolServer(toolkit.get_tools(["describe_table", "sql_query"])).server
    async with create_connected_server_and_client_session(server) as client:
        result = await client.call_tool(name, arguments)
    assert result.isError is True
    assert expected in text(result)
    assert "root:" not in text(result)  # nothing of the named file was read
    assert result.structuredContent is None


class _Broken(BaseTool):
    """A tool with a bug: its exception message must not reach the client."""

    name: str = "broken"
    description: str = "Always fails."

    def _run(self) -> str:
        raise RuntimeError("internal detail /home/secret")


async def test_a_bug_is_an_error_without_its_details() -> None:
    async with create_connected_server_and_client_session(ToolServer([_Broken()]).server) as c:
        result = await c.call_tool("broken", {})
    assert result.isError is True
    assert text(result) == "broken failed with an internal error (RuntimeError)"


def test_duplicate_tool_names_are_refused(toolkit: TableRAGToolkit) -> None:
    sql = toolkit.get_tool("sql_query")
    with pytest.raises(ValueError, match="duplicate tool names"):
        ToolServer([sql, sql])


async def _python(client: ClientSession, code: str) -> Any:
    return await client.call_tool("python_sandbox", {"code": code})


@pytest.mark.sandbox
async def test_python_variables_are_kept_per_session_only(toolkit: TableRAGToolkit) -> None:
    server = ToolServer(toolkit.get_tools("full")).server
    async with create_connected_server_and_client_session(server) as alice:
        assert (await _python(alice, "deep = int(lakes['Max depth (m)'].max())")).isError is False
        async with create_connected_server_and_client_session(server) as bob:
            other = await _python(bob, "deep")
            same_name = await bob.call_tool(
                "python_sandbox", {"code": "deep", "session_id": "default"}
            )
        mine = await _python(alice, "deep + 1")
    assert other.isError is True and "NameError: name 'deep' is not defined" in text(other)
    assert same_name.isError is True
    assert mine.isError is False and text(mine) == "452"


def test_instructions_name_only_the_tools_served(toolkit: TableRAGToolkit) -> None:
    full = ToolServer(toolkit.get_tools("full")).server.instructions or ""
    sandbox_only = ToolServer(toolkit.get_tools(["python_sandbox"])).server.instructions or ""
    assert "describe_table" in full and "sql_query" in full
    assert sandbox_only == "Tools over a fixed set of tables, named by id (never by file path)."


CHART = (
    "```python\ndef make_chart(df):\n    import matplotlib.pyplot as plt\n"
    "    data = df[['Name', 'Max depth (m)']]\n"
    "    fig, ax = plt.subplots(figsize=(5, 3))\n"
    "    ax.bar(data['Name'], data['Max depth (m)'])\n"
    "    ax.set_title('Depth of each lake')\n"
    "    return data\n```"
)


@pytest.mark.sandbox
async def test_a_chart_answer_is_an_image(tmp_path: Path, sandbox: Sandbox) -> None:
    with TableRAGToolkit.from_folder(
        table_folder(tmp_path),
        chat_model=ScriptedChatModel([CHART]),
        embeddings=DeterministicFakeEmbedding(size=32),
        settings=Settings(cache_dir=tmp_path, llm_cache=False),
        sandbox=sandbox,
    ) as kit:
        server = ToolServer(kit.get_tools(["ask_tables", "python_sandbox"])).server
        async with create_connected_server_and_client_session(server) as client:
            result = await client.call_tool(
                "ask_tables", {"question": "plot the depth of each lake", "tables": ["lakes"]}
            )
            drawn = await _python(
                client,
                "import matplotlib.pyplot as plt\nplt.figure(figsize=(2, 2))\nplt.plot([1, 2])",
            )
    assert result.isError is False
    words, image = result.content
    assert words.type == "text" and words.text.startswith("Answer: Chart: Depth of each lake")
    assert image.type == "image" and image.mimeType == "image/png"
    png = base64.b64decode(image.data)
    assert png.startswith(PNG_SIGNATURE) and Image.open(io.BytesIO(png)).size == (500, 300)
    assert result.structuredContent is not None
    chart = result.structuredContent["chart"]
    assert chart["png_base64"] == image.data and chart["title"] == "Depth of each lake"
    assert chart["data"]["rows"] == [["Lake Van", 451], ["Lake Tuz", 2], ["Lake Beysehir", 10]]
    # A figure python_sandbox's code leaves open is an image too.
    assert [block.type for block in drawn.content] == ["text", "image"]
    assert Image.open(io.BytesIO(base64.b64decode(drawn.content[1].data))).size == (200, 200)


async def test_an_answer_without_a_chart_has_no_image(toolkit: TableRAGToolkit) -> None:
    server = ToolServer(toolkit.get_tools(["sql_query"])).server
    async with create_connected_server_and_client_session(server) as client:
        result = await client.call_tool("sql_query", {"query": "SELECT 1 AS one"})
    assert [block.type for block in result.content] == ["text"]
