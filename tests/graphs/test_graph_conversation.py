"""Threads, checkpointers and streaming modes of the graph (scripted model)."""

from __future__ import annotations

import sqlite3

from fakes import ScriptedChatModel, sql_reply
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from tablerag_agents.graphs import Context, build_graph


def test_a_follow_up_keeps_the_tables_and_sees_the_earlier_turn(
    resources_factory, seasons_table, lakes_table
) -> None:
    model = ScriptedChatModel(
        [
            sql_reply('SELECT "Avg. Attendance" FROM t WHERE "Year" = \'2002\''),
            "What was the Portland Timbers' average attendance in 2003?",  # the rewrite
            sql_reply('SELECT "Avg. Attendance" FROM t WHERE "Year" = \'2003\''),
        ]
    )
    graph = build_graph(
        resources_factory(model, seasons_table, lakes_table), checkpointer=InMemorySaver()
    )
    thread = {"configurable": {"thread_id": "t1"}}
    ctx = Context(solver="sql", max_tables=1)
    first = graph.invoke(
        {"question": "Portland Timbers seasons average attendance in 2002?"}, thread, context=ctx
    )
    assert first["table_ids"] == ["seasons"] and first["answer"]["text"] == "6260"
    second = graph.invoke({"question": "and in 2003?"}, thread, context=ctx)
    assert second["answer"]["text"] == "5871" and second["table_ids"] == ["seasons"]
    rewrite_prompt = model.prompts[1][-1].content
    assert "Portland Timbers seasons average attendance in 2002?" in rewrite_prompt
    assert "and in 2003?" in rewrite_prompt
    # The solver got the standalone question, and the thread holds both turns.
    assert "in 2003?" in model.prompts[2][-1].content and "Timbers" in model.prompts[2][-1].content
    assert [m.type for m in second["messages"]] == ["human", "ai", "human", "ai"]
    assert [r["node"] for r in second["trace"]][0] == "prepare"  # a new trace per turn
    assert len([r for r in second["trace"] if r["node"] == "prepare"]) == 1


def test_threads_do_not_share_conversations(resources_factory, seasons_table) -> None:
    model = ScriptedChatModel(
        [sql_reply('SELECT MIN("Year") FROM t'), sql_reply('SELECT MAX("Year") FROM t')]
    )
    graph = build_graph(resources_factory(model, seasons_table), checkpointer=InMemorySaver())
    ctx = Context(solver="sql")
    graph.invoke({"question": "first?"}, {"configurable": {"thread_id": "a"}}, context=ctx)
    out = graph.invoke({"question": "last?"}, {"configurable": {"thread_id": "b"}}, context=ctx)
    assert [m.content for m in out["messages"] if m.type == "human"] == ["last?"]
    assert len(model.prompts) == 2  # no rewrite: thread b has no earlier turn


def test_sqlite_checkpointer_keeps_a_thread_across_graphs(
    tmp_path, resources_factory, seasons_table
) -> None:
    path = tmp_path / "threads.sqlite"
    model = ScriptedChatModel(
        [
            sql_reply('SELECT MIN("Year") FROM t'),
            "What is the last year?",
            sql_reply('SELECT MAX("Year") FROM t'),
        ]
    )
    res = resources_factory(model, seasons_table)
    thread = {"configurable": {"thread_id": "x"}}
    with sqlite3.connect(path, check_same_thread=False) as conn:
        build_graph(res, checkpointer=SqliteSaver(conn)).invoke(
            {"question": "first year?"}, thread, context=Context(solver="sql")
        )
    with sqlite3.connect(path, check_same_thread=False) as conn:
        graph = build_graph(res, checkpointer=SqliteSaver(conn))
        out = graph.invoke({"question": "and the last?"}, thread, context=Context(solver="sql"))
    assert out["answer"]["text"] == "2005"
    assert [m.content for m in out["messages"] if m.type == "human"] == [
        "first year?",
        "and the last?",
    ]


def test_messages_input_works_like_a_question(resources_factory, seasons_table) -> None:
    model = ScriptedChatModel([sql_reply('SELECT MIN("Year") FROM t')])
    graph = build_graph(resources_factory(model, seasons_table))
    out = graph.invoke(
        {"messages": [{"role": "user", "content": "first year?"}]}, context={"solver": "sql"}
    )
    assert out["answer"]["text"] == "2001" and len(out["messages"]) == 2


def test_stream_modes_updates_messages_and_custom(resources_factory, seasons_table) -> None:
    model = ScriptedChatModel([sql_reply('SELECT MIN("Year") FROM t')])
    graph = build_graph(resources_factory(model, seasons_table))
    seen: dict[str, list] = {"updates": [], "messages": [], "custom": []}
    for mode, chunk in graph.stream(
        {"question": "first year?", "tables": ["seasons"]},
        context=Context(solver="sql"),
        stream_mode=["updates", "messages", "custom"],
    ):
        seen[mode].append(chunk)
    assert [next(iter(u)) for u in seen["updates"]] == ["prepare", "solve", "answer"]
    assert {"node": "solve", "step": "sql", "tables": ["seasons"]} in seen["custom"]
    assert any(e.get("step") == "done" and e.get("answer") == "2001" for e in seen["custom"])
    texts = "".join(str(msg.content) for msg, _meta in seen["messages"])
    assert 'MIN("Year")' in texts  # the solver's model output, as it was produced
    assert {meta["langgraph_node"] for _msg, meta in seen["messages"]} >= {"solve"}


def test_a_new_topic_on_a_thread_moves_to_its_table(
    resources_factory, seasons_table, lakes_table
) -> None:
    model = ScriptedChatModel(
        [
            sql_reply('SELECT MIN("Year") FROM t'),
            "Which lake of Turkey has the largest depth?",  # the rewrite keeps a new topic
            sql_reply('SELECT "Lake" FROM t ORDER BY CAST("Depth (m)" AS INT) DESC LIMIT 1'),
        ]
    )
    graph = build_graph(
        resources_factory(model, seasons_table, lakes_table), checkpointer=InMemorySaver()
    )
    thread = {"configurable": {"thread_id": "t"}}
    ctx = Context(solver="sql", max_tables=1)
    first = graph.invoke({"question": "Portland Timbers seasons first year?"}, thread, context=ctx)
    assert first["table_ids"] == ["seasons"]
    second = graph.invoke(
        {"question": "Which lake of Turkey has the largest depth?"}, thread, context=ctx
    )
    assert second["table_ids"] == ["lakes"] and second["answer"]["text"] == "Van"
