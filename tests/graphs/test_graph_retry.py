"""The graph's retry path: solvers tried in turn until one produces a value.

These were the ``FallbackSolver`` tests; the graph's ``retry_solvers`` is now
the one way to chain solvers (``Context()`` chains SQL -> process_df -> ReadTable).
"""

from __future__ import annotations

import pytest
from fakes import BagOfWordsEmbeddings, ScriptedChatModel, count_tokens, sql_reply
from graph_runs import run_graph
from tablerag_agents.graphs import Context, TableQAResult, build_graph

from tablerag_agents.resources import Resources
from tablerag_agents.solve import SOLVER_NAMES, check_solver_name, make_solver

STATEMENT = (
    "Is the following statement true according to the table? Answer yes or no.\n"
    "Statement: the team played in the USL First Division in 2005"
)


def _ask(resources_factory, table, replies, question, ctx: Context):
    model = ScriptedChatModel(replies)
    graph = build_graph(resources_factory(model, table))
    ran, out = run_graph(graph, {"question": question, "tables": [table.id]}, ctx)
    return model, ran, TableQAResult.from_output(out)


def test_the_default_context_chains_sql_process_df_read_table() -> None:
    ctx = Context()
    assert (ctx.solver, ctx.retry_solvers) == ("sql", ["process_df", "read_table"])


def test_first_real_answer_wins_and_later_solvers_do_not_run(
    resources_factory, seasons_table
) -> None:
    model, ran, result = _ask(
        resources_factory,
        seasons_table,
        [sql_reply('SELECT MIN("Year") FROM t'), "Final Answer: 2003"],
        "first year?",
        Context(solver="sql", retry_solvers=["read_table"]),
    )
    assert ran == ["prepare", "solve", "answer"] and model.remaining == 1
    assert result.answer.text == "2001" and result.answer.solver == "sql"


def test_empty_sql_result_falls_back_to_the_next_solver(resources_factory, seasons_table) -> None:
    empty = sql_reply('SELECT "Year" FROM t WHERE "League" = \'MLS\'')
    model, ran, result = _ask(
        resources_factory,
        seasons_table,
        [empty, empty, "Final Answer: 2005"],  # the SQL solver asks once more, gets a repeat
        "which year in the USL First Division?",
        Context(solver="sql", retry_solvers=["read_table"]),
    )
    assert ran == ["prepare", "solve", "solve", "answer"] and model.remaining == 0
    assert result.answer.text == "2005" and result.answer.solver == "read_table"
    # Costs and the trace cover both solvers.
    assert [s["action"] for s in result.solver_steps] == ["sql", "sql", "answer"]
    prompts = sum(count_tokens(m.content) for prompt in model.prompts for m in prompt)
    assert result.input_tokens == prompts


def test_a_zero_is_an_answer_and_ends_the_chain(resources_factory, seasons_table) -> None:
    """No season was in MLS: 0 is the right answer, not a reason to try more solvers."""
    model, ran, result = _ask(
        resources_factory,
        seasons_table,
        [sql_reply("SELECT COUNT(*) FROM t WHERE \"League\" = 'MLS'"), "Final Answer: none"],
        "how many MLS seasons?",
        Context(),  # the default chain
    )
    assert ran == ["prepare", "solve", "answer"] and model.remaining == 1
    assert result.answer.text == "0" and result.answer.solver == "sql"


def test_the_chain_moves_on_only_when_a_solver_has_no_value(
    resources_factory, seasons_table
) -> None:
    bad = [sql_reply(f"SELECT nope{i} FROM t") for i in range(3)]
    model, ran, result = _ask(
        resources_factory,
        seasons_table,
        [*bad, "Final Answer: none"],
        "how many MLS seasons?",
        Context(solver="sql", retry_solvers=["read_table"]),
    )
    assert ran == ["prepare", "solve", "solve", "answer"] and model.remaining == 0
    assert result.answer.text == "none" and result.answer.solver == "read_table"
    assert not result.answer.abstained and result.answer.error is None


def test_sql_value_for_a_yes_no_question_moves_on_to_the_next_solver(
    resources_factory, seasons_table
) -> None:
    value = sql_reply('SELECT "League" FROM t WHERE "Year" = \'2005\'')
    model, ran, result = _ask(
        resources_factory,
        seasons_table,
        [value, value, "Final Answer: yes"],  # asked once more for yes/no, it repeats itself
        STATEMENT,
        Context(solver="sql", retry_solvers=["read_table"]),
    )
    assert ran == ["prepare", "solve", "solve", "answer"] and model.remaining == 0
    assert result.answer.items == ["yes"] and result.answer.solver == "read_table"


@pytest.mark.sandbox
def test_the_default_chain_runs_process_df_in_the_sandbox(seasons_table, sandbox) -> None:
    bad = [sql_reply(f'SELECT "nope{i}" FROM t') for i in range(3)]
    code = "```python\ndef process_df(df):\n    return df['Year'].min()\n```"
    model = ScriptedChatModel([*bad, code, "Final Answer: 2003"])
    with Resources(chat_model=model, embeddings=BagOfWordsEmbeddings(), sandbox=sandbox) as res:
        res.add_table(seasons_table)
        ran, out = run_graph(
            build_graph(res), {"question": "first season?", "tables": ["seasons"]}, Context()
        )
    result = TableQAResult.from_output(out)
    assert ran == ["prepare", "solve", "solve", "answer"] and model.remaining == 1
    assert result.answer.text == "2001" and result.answer.solver == "process_df"


def test_fallback_is_no_longer_a_solver() -> None:
    assert "fallback" not in SOLVER_NAMES
    with pytest.raises(ValueError, match="'fallback' was removed: the graph tries solvers"):
        check_solver_name("fallback")
    with pytest.raises(ValueError, match="unknown solver 'fallback'"):
        make_solver("fallback", ScriptedChatModel([]))
