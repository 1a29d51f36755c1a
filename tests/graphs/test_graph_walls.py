"""The graph resolves table ids only: no host file or folder a run names is ever opened."""

from __future__ import annotations

import importlib
from pathlib import Path

import pandas as pd
import pytest
from fakes import BagOfWordsEmbeddings, ScriptedChatModel, sql_reply
from graph_runs import run_graph
from tablerag_agents.graphs import Context, build_graph

from tablerag_agents import resources as resources_module
from tablerag_agents.errors import GraphRunError, UnknownTableError
from tablerag_agents.resources import Resources
from tablerag_agents.retrieval.corpus import CorpusIndex

# The package exports the compiled ``graph``, which hides the module of the same name.
graph_module = importlib.import_module("tablerag_agents.graphs.graph")


@pytest.fixture
def no_file_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if the resources load any table file."""

    def refuse(path: object, *args: object, **kwargs: object) -> None:
        raise AssertionError(f"the graph opened {path}")

    monkeypatch.setattr(resources_module, "load_table", refuse)


@pytest.mark.parametrize("ref", ["/etc/passwd", "REAL_CSV"])
def test_a_file_path_in_the_input_is_refused_and_nothing_is_read(
    resources_factory, seasons_table, tmp_path: Path, no_file_reads, ref: str
) -> None:
    csv = tmp_path / "private.csv"
    csv.write_text("secret\nhunter2\n")
    ref = str(csv) if ref == "REAL_CSV" else ref
    model = ScriptedChatModel([sql_reply("SELECT * FROM t")])
    res = resources_factory(model, seasons_table)
    with pytest.raises(UnknownTableError) as raised:
        build_graph(res).invoke({"question": "what is in it?", "tables": [ref]})
    message = str(raised.value)
    assert f"unknown table {ref!r}" in message and "never opened" in message
    assert "(ids: seasons)" in message
    assert res.table_ids == ["seasons"] and model.remaining == 1  # nothing ran


def test_an_index_dir_from_the_run_is_refused(
    resources_factory, seasons_table, lakes_table, tmp_path: Path
) -> None:
    folder = tmp_path / "index"
    CorpusIndex.build([lakes_table], BagOfWordsEmbeddings(), progress=False).save(folder)
    res = resources_factory(ScriptedChatModel([]), seasons_table)
    graph = build_graph(res)
    with pytest.raises(ValueError, match="index_dir=.* is not a run setting"):
        graph.invoke({"question": "deepest lake?"}, context={"index_dir": str(folder)})
    with pytest.raises(ValueError, match="TABLERAG_INDEX_DIR"):
        Context(index_dir=str(folder))
    with pytest.raises(UnknownTableError):  # the folder's tables are not reachable either
        graph.invoke({"question": "deepest lake?", "tables": ["lakes"]})


def test_the_index_the_graph_is_built_over_is_searched(
    resources_factory, seasons_table, lakes_table, tmp_path: Path
) -> None:
    folder = tmp_path / "index"
    CorpusIndex.build([lakes_table], BagOfWordsEmbeddings(), progress=False).save(folder)
    deepest = 'SELECT "Lake" FROM t ORDER BY CAST("Depth (m)" AS INT) DESC LIMIT 1'
    model = ScriptedChatModel([sql_reply(deepest)] * 2)
    graph = build_graph(resources_factory(model, seasons_table), index_dir=folder)
    ran, out = run_graph(graph, {"question": "Which lake is deepest?"}, Context(solver="sql"))
    assert ran == ["prepare", "retrieve_tables", "solve", "answer"]
    assert out["table_ids"] == ["lakes"] and out["answer"]["text"] == "Van"
    _, named = run_graph(
        graph, {"question": "Which lake is deepest?", "tables": ["lakes"]}, Context(solver="sql")
    )
    assert named["answer"]["text"] == "Van"  # a corpus id can be named


def test_the_table_scope_hides_other_registered_tables(
    resources_factory, seasons_table, lakes_table
) -> None:
    model = ScriptedChatModel([sql_reply('SELECT MIN("Year") FROM t')])
    graph = build_graph(resources_factory(model, seasons_table, lakes_table))
    scoped = Context(solver="sql", table_scope=["seasons"])
    with pytest.raises(UnknownTableError, match=r"\(ids: seasons\)"):
        graph.invoke({"question": "deepest lake?", "tables": ["lakes"]}, context=scoped)
    # With one table in scope, a turn without tables uses it: no search over the others.
    ran, out = run_graph(graph, {"question": "first season?"}, scoped)
    assert ran == ["prepare", "solve", "answer"] and out["table_ids"] == ["seasons"]
    assert "Lake" not in model.prompts[0][-1].content


def test_the_served_graph_takes_deployment_tables_and_raises_readable_errors(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "tables"
    folder.mkdir()
    pd.DataFrame({"Lake": ["Van", "Tuz"], "Depth": ["451", "1"]}).to_csv(
        folder / "lakes.csv", index=False
    )
    model = ScriptedChatModel(
        [sql_reply('SELECT "Lake" FROM t ORDER BY CAST("Depth" AS INT) DESC LIMIT 1')]
    )
    res = Resources(chat_model=model, embeddings=BagOfWordsEmbeddings())
    monkeypatch.setattr(resources_module, "_DEFAULT", res)
    monkeypatch.setenv(graph_module.TABLES_DIR_ENV, str(folder))
    monkeypatch.delenv(graph_module.INDEX_DIR_ENV, raising=False)
    served = graph_module.served_graph()
    try:
        out = served.invoke(
            {"question": "deepest?", "tables": ["lakes"]}, context={"solver": "sql"}
        )
        assert out["answer"]["text"] == "Van" and res.table_ids == ["lakes"]
        with pytest.raises(GraphRunError) as raised:
            served.invoke({"question": "x?", "tables": [str(folder / "lakes.csv")]})
        # A RuntimeError: LangGraph API servers show its message instead of hiding it.
        assert isinstance(raised.value, RuntimeError)
        assert str(raised.value).startswith("UnknownTableError: unknown table ")
        assert isinstance(raised.value.__cause__, UnknownTableError)
    finally:
        res.close()


def test_the_python_api_opens_files_before_the_run(tmp_path: Path) -> None:
    from tablerag_agents.qa import answer_question

    path = tmp_path / "lakes.csv"
    pd.DataFrame({"Lake": ["Van", "Tuz"], "Depth": ["451", "1"]}).to_csv(path, index=False)
    model = ScriptedChatModel(
        [sql_reply('SELECT "Lake" FROM t ORDER BY CAST("Depth" AS INT) DESC LIMIT 1')]
    )
    with Resources(chat_model=model, embeddings=BagOfWordsEmbeddings()) as res:
        result = answer_question(
            "deepest?", table_path=path, context=Context(solver="sql"), resources=res
        )
        assert result.answer.text == "Van" and result.answer.table_ids == ["lakes"]
        assert res.table_ids == ["lakes"]  # registered by the caller, then named by id


def test_a_wrong_deployment_folder_is_a_readable_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    res = Resources(chat_model=ScriptedChatModel([]), embeddings=BagOfWordsEmbeddings())
    monkeypatch.setattr(resources_module, "_DEFAULT", res)
    monkeypatch.setenv(graph_module.TABLES_DIR_ENV, str(tmp_path / "missing"))
    try:
        with pytest.raises(GraphRunError, match="ConfigError: TABLERAG_TABLES_DIR=.* not a folder"):
            graph_module.served_graph().invoke({"question": "x?", "tables": ["t"]})
    finally:
        res.close()
