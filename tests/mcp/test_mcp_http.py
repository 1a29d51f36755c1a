"""``tablerag mcp --http``: Streamable HTTP on loopback, with the MCP client and through
langchain-mcp-adapters into ``create_agent`` (a scripted model; no network beyond loopback)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from fakes import ScriptedChatModel, tool_call
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_mcp_adapters.client import MultiServerMCPClient
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_testdata import http_server, table_folder

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[str]]]:
    """One server for the module: ``tablerag mcp --http --port 0`` over the one-table folder."""
    root = tmp_path_factory.mktemp("mcp-http")
    with http_server(table_folder(root), root) as running:
        yield running


async def test_http_server_lists_and_runs_the_tools(server: tuple[str, list[str]]) -> None:
    url, notes = server
    assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
    assert any("tablerag MCP server: 1 tables" in line for line in notes)
    async with streamable_http_client(url) as (read, write, _):
        async with ClientSession(read, write) as client:
            await client.initialize()
            tools = [tool.name for tool in (await client.list_tools()).tools]
            rows = await client.call_tool(
                "sql_query", {"query": 'SELECT "Name" FROM lakes WHERE "Area (km2)" < 1000'}
            )
            unknown = await client.call_tool(
                "retrieve_table_context", {"table": "/etc/hosts", "question": "hosts?"}
            )
            rejected = await client.call_tool(
                "sql_query", {"query": "COPY lakes TO '/tmp/lakes.csv'"}
            )
    assert "sql_query" in tools and "describe_table" in tools
    assert rows.isError is False
    assert rows.structuredContent is not None
    assert rows.structuredContent["records"] == [{"Name": "Lake Beysehir"}]
    assert unknown.isError is True and "the tables are: lakes" in unknown.content[0].text
    assert (
        rejected.isError is True
        and "only SELECT queries are allowed, not COPY" in rejected.content[0].text
    )


def test_other_hosts_origins_and_big_bodies_are_refused(server: tuple[str, list[str]]) -> None:
    url, _ = server
    with httpx.Client(timeout=30) as http:
        ok = http.post(url, json=INITIALIZE, headers=HEADERS)
        rebound = http.post(url, json=INITIALIZE, headers={**HEADERS, "Host": "evil.example"})
        page = http.post(url, json=INITIALIZE, headers={**HEADERS, "Origin": "http://evil.example"})
        big = http.post(url, content=b"x" * (1024 * 1024 + 1), headers=HEADERS)
    assert ok.status_code == 200
    assert rebound.status_code == 421
    assert page.status_code == 403
    assert big.status_code == 413


async def test_adapter_tools_drive_a_create_agent(server: tuple[str, list[str]]) -> None:
    url, _ = server
    client = MultiServerMCPClient({"tablerag": {"transport": "streamable_http", "url": url}})
    tools = await client.get_tools()
    assert {"describe_table", "sql_query"} <= {tool.name for tool in tools}
    query = 'SELECT "Name", "Max depth (m)" FROM lakes ORDER BY 2 DESC LIMIT 1'
    model = ScriptedChatModel(
        [
            tool_call("describe_table", {"table": "lakes.csv"}, "c1"),
            tool_call("sql_query", {"query": query}, "c2"),
            "Lake Van is the deepest (451 m).",
        ]
    )
    agent = create_agent(model, tools)
    out = await agent.ainvoke({"messages": [("user", "Which lake is the deepest?")]})
    wrong_id, result = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert wrong_id.status == "error"
    assert "no table 'lakes.csv'; the tables are: lakes" in str(wrong_id.content)
    assert result.status == "success"
    assert "| Lake Van | 451 |" in str(result.content)
    assert result.artifact["structured_content"]["records"] == [
        {"Name": "Lake Van", "Max depth (m)": 451}
    ]
    assert out["messages"][-1].content == "Lake Van is the deepest (451 m)."
    assert "sql_query" in {t["function"]["name"] for t in model.bound_tools}
