"""``tablerag mcp``: its help, and the one-line errors it stops with before serving."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from mcp_testdata import table_folder
from typer.testing import CliRunner

from tablerag_agents.cli import app

runner = CliRunner()


def test_mcp_command_has_help() -> None:
    assert "mcp" in runner.invoke(app, ["--help"]).output
    result = runner.invoke(app, ["mcp", "--help"])
    assert result.exit_code == 0
    for option in ("--tables", "--index", "--http", "--port", "--tools", "--solver", "--set"):
        assert option in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give --tables DIR and/or --index DIR"),
        (["--tables", "{tmp}/nowhere"], "--tables {tmp}/nowhere: not a folder"),
        (["--index", "{tmp}"], "no corpus index there (manifest.json is missing)"),
        (["--tables", "{tables}", "--tools", "sql_query,drop"], "--tools sql_query,drop: no tool"),
        (["--tables", "{tables}", "--tools", "everything"], "no tool 'everything'"),
        (["--tables", "{tables}", "--set", "nonsense"], "--set wants KEY=VALUE"),
    ],
)
def test_bad_options_stop_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    tables = table_folder(tmp_path)
    fill = {"tmp": str(tmp_path), "tables": str(tables)}
    result = runner.invoke(app, ["mcp", *(a.format(**fill) for a in args)])
    assert result.exit_code == 2
    assert message.format(**fill) in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_a_busy_port_is_an_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = runner.invoke(
            app, ["mcp", "--tables", str(table_folder(tmp_path)), "--http", "--port", str(port)]
        )
    assert result.exit_code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in " ".join(result.output.split())
