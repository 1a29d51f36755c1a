"""``tablerag mcp``: the toolkit's tools over the Model Context Protocol (stdio or HTTP).

Example:
    >>> from tablerag_agents.mcp_server import ToolServer
    >>> from tablerag_agents.tools import TableRAGToolkit
    >>> with TableRAGToolkit.from_folder("tables/") as toolkit:
    ...     server = ToolServer(toolkit.get_tools("full")).server  # an mcp SDK Server
"""

from tablerag_agents.mcp_server.main import DEFAULT_PORT, serve_mcp
from tablerag_agents.mcp_server.tool_server import ToolServer
from tablerag_agents.mcp_server.transports import http_app, run_http, run_stdio

__all__ = ["DEFAULT_PORT", "ToolServer", "http_app", "run_http", "run_stdio", "serve_mcp"]
