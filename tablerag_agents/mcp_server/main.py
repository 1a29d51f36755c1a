"""``tablerag mcp``: the toolkit's tools over one set of tables, served over MCP."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import anyio

from tablerag_agents.config import Settings
from tablerag_agents.graphs import Context
from tablerag_agents.mcp_server.tool_server import ToolServer
from tablerag_agents.mcp_server.transports import run_http, run_stdio
from tablerag_agents.tables import load_tables
from tablerag_agents.tools import TableRAGToolkit
from tablerag_agents.tools.toolkit import ToolSet

logger = logging.getLogger(__name__)

#: Port of ``--http`` when none is given.
DEFAULT_PORT = 8765


def serve_mcp(
    *,
    tables_dir: Path | None = None,
    index_dir: Path | None = None,
    context: Context | None = None,
    tools: str = "full",
    http: bool = False,
    port: int = DEFAULT_PORT,
    announce: Callable[[str], None] = logger.info,
) -> None:
    """Serve the tools until the client leaves (stdio) or the process is interrupted (HTTP).

    Args:
        tables_dir: Register the table files in this folder (ids: their paths in
            it without the extension, as ``tablerag serve --tables``).
        index_dir: A saved corpus index whose tables are also served.
        context: Graph settings of ``ask_tables``.
        tools: ``"full"`` (every tool), ``"small"`` (the toolkit's small set) or
            comma-separated tool names.
        http: Streamable HTTP on 127.0.0.1 instead of stdio.
        port: The HTTP port (0: a free one).
        announce: Receives one-line start-up notes (never stdout: stdio is the protocol).

    Raises:
        ValueError: No tables, a folder that is not one, an unknown tool name, a busy port.
    """
    for name, folder in (("--tables", tables_dir), ("--index", index_dir)):
        if folder is not None and not folder.is_dir():
            raise ValueError(f"{name} {folder}: not a folder")
    if tables_dir is None and index_dir is None:
        raise ValueError("give --tables DIR and/or --index DIR: the tables the tools serve")
    if index_dir is not None and not (index_dir / "manifest.json").is_file():
        raise ValueError(f"--index {index_dir}: no corpus index there (manifest.json is missing)")
    tables = list(load_tables(tables_dir)) if tables_dir is not None else []
    with TableRAGToolkit.from_tables(
        tables, index_path=index_dir, settings=Settings(), ask_context=context
    ) as toolkit:
        try:
            chosen = toolkit.get_tools(_tool_spec(tools))
        except KeyError as exc:
            raise ValueError(f"--tools {tools}: {exc.args[0]}") from None
        server = ToolServer(chosen).server
        names = ", ".join(t.name for t in chosen)
        announce(f"tablerag MCP server: {len(toolkit.catalog.ids())} tables; tools: {names}")
        if http:
            anyio.run(run_http, server, port, lambda url: announce(f"listening on {url}"))
        else:
            anyio.run(run_stdio, server)


def _tool_spec(spec: str) -> ToolSet | list[str]:
    """``"full"``, ``"small"`` or the tool names of a comma-separated list."""
    if spec in ("full", "small"):
        return "full" if spec == "full" else "small"
    return [name.strip() for name in spec.split(",") if name.strip()]
