"""Apostrophe repair for Python and SQL written by small models."""

from __future__ import annotations

import pandas as pd
import pytest
from fakes import ScriptedChatModel

from tablerag_agents.solve.process_df import ProcessDfSolver
from tablerag_agents.solve.quoting import fix_python_apostrophes, fix_sql_apostrophes
from tablerag_agents.solve.sql import SQLSolver


@pytest.fixture
def finals() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "Year": [2001, 2002, 2003, 2004],
            "Men's runner-up": ["Queen's", "King's", "Queen's", "Queen's"],
        }
    )


def test_fix_python_apostrophes() -> None:
    bad = "df[df['Men's runner-up'] == 'Queen's'].shape[0]"
    fixed = fix_python_apostrophes(bad)
    assert fixed == "df[df['Men\\'s runner-up'] == 'Queen\\'s'].shape[0]"
    assert fix_python_apostrophes("df['a'].max()") is None  # parses already
    assert fix_python_apostrophes("df[") is None  # not an apostrophe problem
    # f-strings keep their prefix quote.
    assert fix_python_apostrophes("x = f'{n}'\ny = 'it's'") == "x = f'{n}'\ny = 'it\\'s'"


def test_fix_sql_apostrophes() -> None:
    sql = "SELECT COUNT(*) FROM t WHERE \"Men's runner-up\" = 'Queen's'"
    assert (
        fix_sql_apostrophes(sql) == "SELECT COUNT(*) FROM t WHERE \"Men's runner-up\" = 'Queen''s'"
    )
    assert fix_sql_apostrophes("SELECT 1 WHERE a = 'Queen\\'s'") == "SELECT 1 WHERE a = 'Queen''s'"
    assert fix_sql_apostrophes("SELECT 1 WHERE a = 'Queen''s'") is None


def test_sql_solver_repairs_the_apostrophe(finals: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        ["```sql\nSELECT COUNT(*) FROM t WHERE \"Men's runner-up\" = 'Queen's'\n```"]
    )
    result = SQLSolver(model).solve("how many times was queen's runner-up?", finals)
    assert result.answer == "3" and result.iterations == 1 and result.error is None
    assert "'Queen''s'" in result.trace[0].code


@pytest.mark.sandbox
def test_process_df_repairs_the_apostrophe(sandbox, finals: pd.DataFrame) -> None:
    model = ScriptedChatModel(
        [
            "```python\ndef process_df(df):\n"
            "    return df[df['Men's runner-up'] == 'Queen's'].shape[0]\n```"
        ]
    )
    result = ProcessDfSolver(model, sandbox).solve("how many times?", finals)
    assert result.answer == "3" and result.iterations == 1 and result.error is None
