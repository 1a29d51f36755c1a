"""Fixtures for the tool tests: toolkits over small real tables (WTQ rows, bundled samples)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tablerag_agents.tools import TableRAGToolkit
from tools_testdata import SAMPLES, fake_embeddings, wtq_tables

from tablerag_agents.sandbox import Sandbox, SandboxPolicy


@pytest.fixture
def toolkit() -> Iterator[TableRAGToolkit]:
    """A toolkit over the bundled sample tables, fake embeddings, no sandbox started."""
    with TableRAGToolkit.from_folder(SAMPLES, embeddings=fake_embeddings()) as kit:
        yield kit


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    """One sandbox per module (the default pool of two workers)."""
    with Sandbox(SandboxPolicy(timeout_s=5.0, max_workers=2, acquire_timeout_s=20)) as sb:
        yield sb


@pytest.fixture
def py_toolkit(sandbox: Sandbox) -> Iterator[TableRAGToolkit]:
    """A toolkit over the WTQ test tables using the module's sandbox."""
    with TableRAGToolkit.from_dataframes(
        wtq_tables(), embeddings=fake_embeddings(), sandbox=sandbox
    ) as kit:
        yield kit
