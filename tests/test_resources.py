"""One process answering many questions shares one sandbox pool, model and indexes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd
import pytest
from fakes import BagOfWordsEmbeddings, ScriptedChatModel
from tablerag_agents.graphs import Context

from tablerag_agents import resources as resources_module
from tablerag_agents.qa import answer_question
from tablerag_agents.resources import Resources, default_resources
from tablerag_agents.sandbox import Sandbox
from tablerag_agents.tables import Table


def _sandbox_processes() -> list[int]:
    """Pids of this process's descendants that run bubblewrap."""
    me, found = os.getpid(), []
    parents: dict[int, int] = {}
    commands: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            commands[int(entry.name)] = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    for pid, command in commands.items():
        ancestor = parents.get(pid)
        while ancestor not in (None, 0, 1, me):
            ancestor = parents.get(ancestor)
        if ancestor == me and "bwrap" in command:
            found.append(pid)
    return found


@pytest.mark.sandbox
def test_twenty_asks_share_one_sandbox_pool_and_leak_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "seasons.csv"
    pd.DataFrame({"Year": [2001, 2002, 2003], "Wins": [3, 0, 5]}).to_csv(table, index=False)
    code = "```python\ndef process_df(df):\n    return int(df['Wins'].sum())\n```"
    model = ScriptedChatModel([code] * 20)
    created: list[Sandbox] = []
    real_init = Sandbox.__init__

    def counting_init(self: Sandbox, *args: object, **kwargs: object) -> None:
        created.append(self)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(Sandbox, "__init__", counting_init)
    monkeypatch.setattr(resources_module, "_DEFAULT", Resources(chat_model=model))
    before = set(_sandbox_processes())
    for _ in range(20):
        result = answer_question(
            "How many wins in total?", table_path=table, context=Context(solver="process_df")
        )
        assert result.answer.text == "8"
    res = default_resources()
    assert len(created) == 1 and res.sandbox is created[0] and model.remaining == 0
    live = set(_sandbox_processes()) - before
    assert len(live) <= res.sandbox.policy.max_workers  # the warm pool, nothing more
    resources_module.close_default_resources()
    deadline = time.monotonic() + 5
    while set(_sandbox_processes()) - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not set(_sandbox_processes()) - before


def test_table_indexes_and_files_are_cached(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    pd.DataFrame({"a": ["x", "y"], "b": ["1", "2"]}).to_csv(path, index=False)
    calls = []

    class CountingEmbeddings(BagOfWordsEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            calls.append(len(texts))
            return super().embed_documents(texts)

    with Resources(chat_model=ScriptedChatModel([]), embeddings=CountingEmbeddings()) as res:
        assert res.add_file(path) == "t"
        table = res.get_table("t")
        assert res.get_table(res.add_file(str(path))) is table  # the file is read once
        first = res.table_index(table, budget=100)
        assert res.table_index(table, budget=100) is first and len(calls) == 2
        assert res.table_index(table, budget=5) is not first  # another budget, another index
        changed = Table(table.id, table.df.assign(b=["1", "3"]))
        assert res.table_index(changed, budget=100) is not first  # new content, new index


def test_unknown_table_reference_lists_what_is_known() -> None:
    from tablerag_agents.errors import TableLoadError

    with Resources(chat_model=ScriptedChatModel([])) as res:
        res.add_table(Table("cities", pd.DataFrame({"a": [1]})))
        with pytest.raises(TableLoadError, match=r"unknown table 'towns'.*\(ids: cities\)"):
            res.get_table("towns")


def test_a_file_path_is_never_opened_as_a_table_reference(tmp_path: Path) -> None:
    from tablerag_agents.errors import UnknownTableError

    path = tmp_path / "secret.csv"
    path.write_text("token\nhunter2\n")
    with Resources(chat_model=ScriptedChatModel([])) as res:
        for ref in (str(path), "/etc/passwd", "secret.csv"):
            with pytest.raises(UnknownTableError, match="never opened"):
                res.get_table(ref)
        assert res.table_ids == []  # nothing was read or registered
