"""SQL over two related tables given together: both are views, the prompt names the join key."""

from __future__ import annotations

from pathlib import Path

from fakes import ScriptedChatModel, sql_reply

from tablerag_agents.solve.base import SolverContext
from tablerag_agents.solve.sql import SQLSolver
from tablerag_agents.tables.loaders import load_table

DATA = Path(__file__).parents[1] / "data" / "realworld"

JOIN = (
    'SELECT c."Customer" FROM t AS c JOIN shop_orders AS o ON c."Customer ID" = o."Customer ID" '
    'GROUP BY c."Customer" ORDER BY SUM(o."Amount") DESC LIMIT 1'
)


def test_sql_joins_two_tables_given_together() -> None:
    customers = load_table(DATA / "shop_customers.csv").df
    orders = load_table(DATA / "shop_orders.csv").df
    model = ScriptedChatModel([sql_reply(JOIN)])
    ctx = SolverContext(
        question="Which customer spent the most in total?",
        # an id that is not a plain SQL name (as load_tables gives stacked sheet tables)
        tables={"shop_customers": customers, "shop#orders": orders},
    )
    result = SQLSolver(model, max_retries=0).solve(ctx)
    assert result.answer == "Acme Ltd"  # 120 + 200 + 90 = 410
    prompt = model.prompts[0][-1].content
    assert '`t` and `shop_orders` share columns (join on them): "Customer ID"' in prompt
    assert "`shop_orders` has 6 rows" in prompt


def test_original_table_id_still_reaches_the_table() -> None:
    customers = load_table(DATA / "shop_customers.csv").df
    orders = load_table(DATA / "shop_orders.csv").df
    query = 'SELECT COUNT(*) FROM "shop#orders" WHERE "Customer ID" = 2'
    model = ScriptedChatModel([sql_reply(query)])
    ctx = SolverContext(
        question="How many orders did customer 2 place?",
        tables={"shop_customers": customers, "shop#orders": orders},
    )
    assert SQLSolver(model, max_retries=0).solve(ctx).answer == "2"
