"""Context.ground_literals turns the solvers' literal-to-cell rewrite on and off."""

from __future__ import annotations

import pytest
from fakes import ScriptedChatModel, sql_reply
from graph_runs import run_graph
from tablerag_agents.graphs import Context, build_graph

QUERY = sql_reply('SELECT "Year" FROM t WHERE "League" = \'First Division\'')


def test_the_rewrite_is_off_by_default() -> None:
    assert Context().ground_literals is False


@pytest.mark.parametrize(("switch", "answer"), [(False, "not found in the tables"), (True, "2005")])
def test_ground_literals_switch(resources_factory, seasons_table, switch, answer) -> None:
    # 'First Division' is no cell but lies inside one ('USL First Division'); the model
    # repeats its query, so only the rewrite can find the row.
    model = ScriptedChatModel([QUERY, QUERY])
    graph = build_graph(resources_factory(model, seasons_table))
    ctx = Context(solver="sql", retry_solvers=[], ground_literals=switch)
    _, out = run_graph(
        graph, {"question": "when was it in first division?", "tables": ["seasons"]}, ctx
    )
    assert out["answer"]["text"] == answer and len(model.prompts) == 2
    steps = out["attempts"][-1]["trace"]
    rewritten = [s for s in steps if "literals matched to cells" in (s.get("thought") or "")]
    assert len(rewritten) == int(switch)
