"""Context.row_numbers and Context.typed_columns reach the graph's solvers (off by default)."""

from __future__ import annotations

import pandas as pd
import pytest
from fakes import ScriptedChatModel, sql_reply
from graph_runs import run_graph
from tablerag_agents.graphs import Context, build_graph

from tablerag_agents.tables import Table

# The season after 2003 in table order; "row_no" exists only with the switch on.
AFTER = sql_reply(
    'SELECT "Regular Season" FROM t WHERE "row_no" = '
    '(SELECT "row_no" FROM t WHERE "Year" = \'2003\') + 1'
)


def test_both_switches_are_off_by_default() -> None:
    assert Context().row_numbers is False and Context().typed_columns is False


@pytest.mark.parametrize(
    ("switch", "answer"), [(False, "not found in the tables"), (True, "1st, Western")]
)
def test_row_numbers_switch(resources_factory, seasons_table, switch, answer) -> None:
    model = ScriptedChatModel([AFTER] * 3)
    graph = build_graph(resources_factory(model, seasons_table))
    ctx = Context(solver="sql", retry_solvers=[], row_numbers=switch)
    _, out = run_graph(
        graph, {"question": "which season came after 2003?", "tables": ["seasons"]}, ctx
    )
    assert out["answer"]["text"] == answer
    assert ('"row_no" (int, row position' in model.prompts[0][1].content) is switch


@pytest.mark.parametrize(
    ("switch", "answer"), [(False, "not found in the tables"), (True, "Pacific Heights")]
)
def test_typed_columns_switch(resources_factory, switch, answer) -> None:
    # Rows of WTQ table 203-csv/98: budgets written as "$11 million".
    films = Table(
        "films",
        pd.DataFrame(
            {
                "Title": ["Young Guns", "Dead Ringers", "Pacific Heights"],
                "Budget": ["$11 million", "N/A", "$18 million"],
            }
        ),
    )
    query = sql_reply('SELECT "Title" FROM t ORDER BY "Budget__num" DESC NULLS LAST LIMIT 1')
    model = ScriptedChatModel([query] * 3)
    graph = build_graph(resources_factory(model, films))
    ctx = Context(solver="sql", retry_solvers=[], typed_columns=switch)
    _, out = run_graph(graph, {"question": "biggest budget?", "tables": ["films"]}, ctx)
    assert out["answer"]["text"] == answer
    assert ('"Budget__num" (int, money in $)' in model.prompts[0][1].content) is switch
