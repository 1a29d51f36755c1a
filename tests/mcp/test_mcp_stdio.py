"""``tablerag mcp`` over stdio, driven by the MCP Python client in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_testdata import mcp_command, server_env, table_folder


async def test_stdio_server_lists_and_runs_the_tools(tmp_path: Path) -> None:
    command, *args = mcp_command("--tables", str(table_folder(tmp_path)))
    params = StdioServerParameters(
        command=command, args=args, env=server_env(tmp_path), cwd=tmp_path
    )
    log = tmp_path / "stderr.txt"
    with log.open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as client:
                info = await client.initialize()
                tools = [tool.name for tool in (await client.list_tools()).tools]
                described = await client.call_tool("describe_table", {"table": "lakes"})
                rows = await client.call_tool(
                    "sql_query", {"query": 'SELECT MAX("Max depth (m)") AS deepest FROM lakes'}
                )
                path = await client.call_tool("describe_table", {"table": "../../etc/passwd"})
                sql_error = await client.call_tool("sql_query", {"query": "DROP TABLE lakes"})
                invalid = await client.call_tool("sql_query", {"query": ""})
    assert info.serverInfo.name == "tablerag"
    assert tools == [
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
    assert described.isError is False
    assert "Size: 3 rows x 3 columns" in described.content[0].text
    assert rows.isError is False and rows.structuredContent is not None
    assert rows.structuredContent["records"] == [{"deepest": 451}]
    assert path.isError is True
    assert path.content[0].text == "no table '../../etc/passwd'; the tables are: lakes"
    assert sql_error.isError is True and "SQL error" in sql_error.content[0].text
    assert invalid.isError is True and invalid.content[0].text.startswith("Invalid arguments: ")
    notes = log.read_text()
    assert "tablerag MCP server: 1 tables; tools: search_tables, describe_table" in notes


def test_stray_output_goes_to_stderr_not_into_the_protocol() -> None:
    code = (
        "import os, sys\n"
        "from tablerag_agents.mcp_server.transports import protocol_stdout\n"
        "with protocol_stdout() as out:\n"
        "    print('noise from print')\n"
        "    os.write(1, b'noise from fd 1\\n')\n"
        "    os.system('echo noise from a child')\n"
        '    out.write(b\'{"jsonrpc": "2.0"}\\n\')\n'
        "    out.flush()\n"
        "print('after')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == '{"jsonrpc": "2.0"}\nafter\n'
    assert proc.stderr.splitlines() == [
        "noise from print",
        "noise from fd 1",
        "noise from a child",
    ]
