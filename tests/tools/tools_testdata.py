"""Test data for the tool tests: the bundled sample tables, WTQ rows, fake embeddings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool

from tablerag_agents.tables import Table, load_wtq_table

SAMPLES = Path(__file__).resolve().parents[2] / "tablerag_agents" / "data"
TEST_DATA = Path(__file__).resolve().parents[1] / "data"


def fake_embeddings() -> DeterministicFakeEmbedding:
    """Embeddings for tests where the model is not the point."""
    return DeterministicFakeEmbedding(size=32)


def wtq_tables() -> list[Table]:
    """Two WTQ tables from ``tests/data`` (ids ``wtq_200_0`` and ``wtq_203_128``)."""
    return [load_wtq_table(TEST_DATA / f"{name}.csv") for name in ("wtq_200_0", "wtq_203_128")]


def call(tool: BaseTool, **args: Any) -> ToolMessage:
    """Invoke ``tool`` as an agent does (a tool call), returning the ToolMessage."""
    message = tool.invoke({"type": "tool_call", "id": "call_1", "name": tool.name, "args": args})
    assert isinstance(message, ToolMessage)
    return message
