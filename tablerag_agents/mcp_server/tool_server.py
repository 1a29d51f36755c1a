"""The toolkit's LangChain tools as an MCP server (the official ``mcp`` SDK's low-level server).

Each MCP ``tools/call`` runs the LangChain tool as an agent would (a tool call),
so a tool's failed call (``status="error"``) is an MCP tool error
(``isError: true``) with the same message, and its artifact is the result's
``structuredContent``; a chart in the artifact is also an ``image/png`` image.
Arguments are validated by the tool itself, whose messages name the bad
argument for the model. Python variables are kept per MCP session: two clients
never see each other's.
"""

from __future__ import annotations

import logging
import uuid
import weakref
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from mcp import types
from mcp.server.lowlevel import Server
from pydantic import BaseModel

from tablerag_agents import __version__
from tablerag_agents.tools import jsonable

logger = logging.getLogger(__name__)

INSTRUCTIONS = "Tools over a fixed set of tables, named by id (never by file path)."
#: Added to the instructions when both tools are served.
DESCRIBE_THEN_QUERY = (
    " Look a table up with describe_table (exact column names), then query it with "
    "sql_query; answer from the results."
)


class ToolServer:
    """Serve ``tools`` over MCP; :attr:`server` is the SDK server to run on a transport.

    Args:
        tools: LangChain tools (the toolkit's), with unique names.
        name: The server's name in the MCP handshake.
    """

    def __init__(self, tools: Sequence[BaseTool], *, name: str = "tablerag") -> None:
        """Register the list and call handlers for ``tools``."""
        self.tools = {tool.name: tool for tool in tools}
        if len(self.tools) != len(tools):
            raise ValueError(f"duplicate tool names in {[t.name for t in tools]}")
        instructions = INSTRUCTIONS
        if {"describe_table", "sql_query"} <= self.tools.keys():
            instructions += DESCRIBE_THEN_QUERY
        self.server: Server[Any, Any] = Server(name, version=__version__, instructions=instructions)
        self._sessions: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self.server.list_tools()(self.list_tools)
        self.server.call_tool(validate_input=False)(self.call_tool)

    async def list_tools(self) -> list[types.Tool]:
        """The tools with their descriptions and JSON argument schemas."""
        return [mcp_tool(tool) for tool in self.tools.values()]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """Run tool ``name`` in the calling session's conversation."""
        tool = self.tools.get(name)
        if tool is None:
            return error_result(f"no tool {name!r}; the tools are: {', '.join(self.tools)}")
        call = {"type": "tool_call", "id": uuid.uuid4().hex, "name": name, "args": arguments}
        config: RunnableConfig = {"configurable": {"thread_id": self._conversation()}}
        try:
            message = await tool.ainvoke(call, config)
        except Exception as exc:  # a bug, not a failed call: logged, not shown to the client
            logger.exception("tool %s failed", name)
            return error_result(f"{name} failed with an internal error ({type(exc).__name__})")
        if not isinstance(message, ToolMessage):
            return error_result(f"{name} returned no message")
        return tool_result(message)

    def _conversation(self) -> str:
        """The conversation of the current MCP session (one per client connection)."""
        session = self.server.request_context.session
        key = self._sessions.get(session)
        if key is None:
            key = self._sessions[session] = f"mcp:{uuid.uuid4().hex}"
        return key


def mcp_tool(tool: BaseTool) -> types.Tool:
    """The MCP description of a LangChain tool (its name, description, argument schema)."""
    schema = tool.tool_call_schema
    if isinstance(schema, dict):
        input_schema = schema
    elif issubclass(schema, BaseModel):
        input_schema = schema.model_json_schema()
    else:  # a pydantic v1 model
        input_schema = schema.schema()
    return types.Tool(name=tool.name, description=tool.description, inputSchema=input_schema)


def tool_result(message: ToolMessage) -> types.CallToolResult:
    """A tool's message as an MCP result: its text, its artifact as structured content."""
    text = message.content if isinstance(message.content, str) else str(message.content)
    if message.status == "error":
        return error_result(text)
    artifact = message.artifact
    structured = None
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=text)]
    if artifact is not None:
        data = jsonable(artifact)
        structured = data if isinstance(data, dict) else {"results": data}
        if (image := chart_image(structured)) is not None:
            content.append(image)
    return types.CallToolResult(content=content, structuredContent=structured)


def chart_image(artifact: dict[str, Any]) -> types.ImageContent | None:
    """An artifact's chart (``ask_tables``' chart answer, a ``python_sandbox`` figure) as an image.

    The PNG was checked where it was made (a PNG within ``ChartLimits``); the
    host shows it to the user, the text beside it tells the model what it shows.
    """
    chart = artifact.get("chart")
    png = chart.get("png_base64") if isinstance(chart, dict) else None
    if not isinstance(png, str) or not png:
        return None
    return types.ImageContent(type="image", data=png, mimeType="image/png")


def error_result(text: str) -> types.CallToolResult:
    """An MCP tool error: the client shows ``text`` to its model as a failed call."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=True)
