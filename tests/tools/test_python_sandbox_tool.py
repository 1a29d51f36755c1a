"""python_sandbox: variables per conversation, no worker held between calls, errors as errors."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from tablerag_agents.tools import NamespaceStore, PythonSandboxTool, TableRAGToolkit
from tools_testdata import fake_embeddings, wtq_tables

from tablerag_agents.sandbox import Sandbox, SandboxPolicy

pytestmark = pytest.mark.sandbox


def run(tool: PythonSandboxTool, code: str, thread: str | None = "t1", **args: Any) -> ToolMessage:
    """One agent-style call of python_sandbox in conversation ``thread``."""
    config = {"configurable": {"thread_id": thread}} if thread else {}
    call = {"type": "tool_call", "id": "c1", "name": tool.name, "args": {"code": code, **args}}
    message = tool.invoke(call, config)
    assert isinstance(message, ToolMessage)
    return message


def busy_workers(sandbox: Sandbox) -> int:
    """Workers leased to an open session right now."""
    with sandbox._cond:
        return len(sandbox._all) - len(sandbox._idle)


@pytest.fixture
def py(py_toolkit: TableRAGToolkit) -> PythonSandboxTool:
    tool = py_toolkit.get_tool("python_sandbox")
    assert isinstance(tool, PythonSandboxTool)
    return tool


def test_variable_kept_within_a_thread_not_across_threads(py: PythonSandboxTool) -> None:
    first = run(py, "best = int(df['Year'].max())\nbest", thread="alice")
    assert first.content == "1978" and first.artifact["variables"] == ["best"]
    assert run(py, "best + 1", thread="alice").content == "1979"
    other = run(py, "best + 1", thread="bob")
    assert other.status == "error" and other.content.startswith("Error:")
    assert other.content.rstrip().endswith("Hint: define 'best' in the same code before using it.")
    assert "NameError: name 'best' is not defined" in other.content


def test_async_calls_keep_variables_too(py: PythonSandboxTool) -> None:
    import asyncio

    async def conversation() -> str:
        config = {"configurable": {"thread_id": "async"}}
        for code in ("n = len(df)", "n * 10"):
            call = {"type": "tool_call", "id": "c", "name": py.name, "args": {"code": code}}
            message = await py.ainvoke(call, config)
        return str(message.content)

    assert asyncio.run(conversation()) == "80"


def test_session_id_argument_is_a_separate_namespace(py: PythonSandboxTool) -> None:
    run(py, "x = 1", thread="t")
    run(py, "x = 2", thread="t", session_id="scratch")
    assert run(py, "x", thread="t").content == "1"
    assert run(py, "x", thread="t", session_id="scratch").content == "2"
    # Within its conversation only: another one naming the same session sees nothing.
    other = run(py, "x", thread="other", session_id="scratch")
    assert other.status == "error" and "NameError: name 'x' is not defined" in other.content


def test_what_survives_between_calls(py: PythonSandboxTool) -> None:
    setup = (
        "import re\n"
        "from collections import Counter\n"
        "df['UK'] = pd.to_numeric(df['Chart-Positions UK'], errors='coerce')\n"
        "charted = df[df['UK'].notna()]\n"
        "titles = df['Title']\n"
        "info = {'n': len(df), 'first': df['Title'][0], 'pair': (1, 2)}\n"
        "pair, tags, arr = (1, 'a'), {'x', 'y'}, np.arange(3)\n"
        "def label(year):\n"
        "    return f'{year}: ' + info['first']\n"
        "square = lambda v: v * v\n"
        "len(charted)"
    )
    message = run(py, setup, thread="types")
    assert message.content.startswith("2\n[note] not kept for your next call: square (lambda")
    check = (
        "(label(1969), re.sub('a', 'o', 'la'), Counter('aab')['a'], int(charted['UK'].min()),\n"
        " titles.name, df['UK'].notna().sum(), info['pair'], pair, sorted(tags),\n"
        " arr.tolist(), 'square' in globals())"
    )
    value = run(py, check, thread="types").artifact["value"]
    assert value == [
        "1969: Renaissance",
        "lo",
        2,
        35,
        "Title",
        2,
        [1, 2],  # inside a dict a tuple comes back as a list (JSON)
        [1, "a"],
        ["x", "y"],
        [0, 1, 2],
        False,
    ]
    assert run(py, "type(pair).__name__, type(tags).__name__", thread="types").content == (
        "('tuple', 'set')"
    )


def test_earlier_code_is_not_run_again(py: PythonSandboxTool) -> None:
    first = run(py, "r = float(np.random.default_rng().random())\nprint('ran')\nr", thread="rnd")
    again = run(py, "r", thread="rnd")
    assert again.artifact["value"] == first.artifact["value"]
    assert "ran" not in again.content


def test_code_error_is_a_failed_call_with_the_traceback_tail(py: PythonSandboxTool) -> None:
    run(py, "kept = 5", thread="err")
    message = run(py, "x = 1\ndf['Chart UK'].max()", thread="err")
    assert message.status == "error"  # retry middleware and the agent see a failed call
    lines = message.content.splitlines()
    assert lines[0] == "Error:" and lines[-2] == "KeyError: 'Chart UK'"
    assert "Did you mean 'Chart-Positions UK'?" in lines[-1]
    assert message.artifact is None
    assert run(py, "kept + x", thread="err").content == "6"  # state kept after an error


def test_output_is_capped(py: PythonSandboxTool) -> None:
    message = run(py, "print('x' * 100_000)\n1", thread="big")
    assert len(message.content) <= 2_200
    assert message.content.rstrip().endswith("1")


def test_dataframe_value_is_a_table_for_the_model_and_data_in_the_artifact(
    py: PythonSandboxTool,
) -> None:
    message = run(py, "df[['Year', 'Title']].head(2)", thread="frame")
    assert message.content.splitlines() == [
        "| Year | Title |",
        "|---|---|",
        "| 1969 | Renaissance |",
        "| 1971 | Illusion |",
    ]
    assert message.artifact["value"]["records"] == [
        {"Year": 1969, "Title": "Renaissance"},
        {"Year": 1971, "Title": "Illusion"},
    ]


def test_unknown_table_lists_the_loaded_ones(py: PythonSandboxTool) -> None:
    message = run(py, "1", tables=["wtq_200"])
    assert message.status == "error"
    assert "wtq_200_0" in message.content and "wtq_203_128" in message.content


def test_timeout_keeps_the_earlier_variables() -> None:
    policy = SandboxPolicy(timeout_s=1.0, max_workers=1, acquire_timeout_s=30)
    with TableRAGToolkit.from_dataframes(
        wtq_tables(), embeddings=fake_embeddings(), sandbox_policy=policy
    ) as kit:
        tool = kit.get_tool("python_sandbox")
        run(tool, "a = 41", thread="slow")
        message = run(tool, "while True:\n    pass", thread="slow")
        assert message.status == "error" and "TimeoutError" in message.content
        assert run(tool, "a + 1", thread="slow").content == "42"


@pytest.fixture
def small_pool() -> Iterator[Sandbox]:
    """Two workers, and a short wait: a held worker would fail the test, not hang it."""
    with Sandbox(SandboxPolicy(max_workers=2, acquire_timeout_s=5)) as sandbox:
        yield sandbox


def test_idle_conversations_hold_no_worker(small_pool: Sandbox) -> None:
    with TableRAGToolkit.from_dataframes(
        wtq_tables(), embeddings=fake_embeddings(), sandbox=small_pool
    ) as kit:
        tool = kit.get_tool("python_sandbox")
        for i, thread in enumerate(("a", "b", "c")):
            assert run(tool, f"mine = {i}", thread=thread).status == "success"
            assert busy_workers(small_pool) == 0
        for i, thread in enumerate(("a", "b", "c")):
            assert run(tool, "mine", thread=thread).content == str(i)
        assert busy_workers(small_pool) == 0
        assert small_pool.stats.sessions == 6  # one short session per call
        assert len(small_pool._all) <= 2


def test_three_concurrent_conversations_share_two_workers(small_pool: Sandbox) -> None:
    with TableRAGToolkit.from_dataframes(
        wtq_tables(), embeddings=fake_embeddings(), sandbox=small_pool
    ) as kit:
        tool = kit.get_tool("python_sandbox")
        results: dict[str, list[str]] = {}
        peak = [0]
        stop = threading.Event()

        def watch() -> None:
            while not stop.is_set():
                peak[0] = max(peak[0], busy_workers(small_pool))
                time.sleep(0.002)

        def conversation(name: str) -> None:
            out = [run(tool, f"total = {len(name)}", thread=name).content]
            for _ in range(3):
                time.sleep(0.05)  # the user thinks: no worker is held meanwhile
                out.append(run(tool, "total = total + 1\ntotal", thread=name).content)
            results[name] = out

        watcher = threading.Thread(target=watch)
        watcher.start()
        threads = [threading.Thread(target=conversation, args=(n,)) for n in ("x", "yy", "zzz")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        stop.set()
        watcher.join()
        assert results == {
            "x": ["(no output)", "2", "3", "4"],
            "yy": ["(no output)", "3", "4", "5"],
            "zzz": ["(no output)", "4", "5", "6"],
        }
        assert 1 <= peak[0] <= 2
        assert busy_workers(small_pool) == 0


def test_a_frame_too_large_to_keep_is_reported(py_toolkit: TableRAGToolkit) -> None:
    py_toolkit.namespaces = NamespaceStore(max_frame_mb=1)
    tool = py_toolkit.get_tool("python_sandbox")
    message = run(tool, "big = pd.DataFrame({'x': np.arange(300_000)})\nsmall = 3", thread="m")
    assert "[note] not kept for your next call: big (too large to keep" in message.content
    assert run(tool, "small", thread="m").content == "3"
