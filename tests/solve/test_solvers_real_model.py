"""End to end with the real embedded model on a few WTQ questions (slow).

Too few questions to judge accuracy: these check that the loops run with a
real small model, parse its replies into answers and count tokens.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tablerag_agents.config import Settings
from tablerag_agents.evaluation.datasets import load_wtq, read_wtq_table
from tablerag_agents.models import get_chat_model
from tablerag_agents.solve import PyReActSolver, SolverContext, SQLSolver

# On 2 shared CPU cores a ReAct question can take minutes: allow 30 min per test.
pytestmark = [pytest.mark.slow, pytest.mark.data, pytest.mark.sandbox, pytest.mark.timeout(1800)]

QUESTION_IDS = ("nt-0", "nt-3")  # small tables: a lookup and an arithmetic question


@pytest.fixture(scope="module")
def model():
    return get_chat_model(Settings(llm_cache=False, max_tokens=300))


@pytest.fixture(scope="module")
def examples(shared_data: Path):
    wanted = {
        e.id: e for e in load_wtq(shared_data / "wtq" / "training.tsv") if e.id in QUESTION_IDS
    }
    return [wanted[i] for i in QUESTION_IDS]


def test_pyreact_with_the_embedded_model(model, sandbox, examples) -> None:
    solver = PyReActSolver(model, sandbox, max_iterations=3)
    assert solver.resolved_mode == "text"
    for ex in examples:
        ctx = SolverContext.from_df(ex.question, read_wtq_table(ex.table_path))
        result = solver.solve(ctx)
        assert result.trace, ex.id
        assert result.trace[0].action == "python", result.trace[0].raw
        assert 1 <= result.iterations <= 3
        assert result.answer_items, (ex.id, [s.raw for s in result.trace])
        assert result.input_tokens > 200 and result.output_tokens > 5
        assert result.seconds > 0


def test_sql_with_the_embedded_model(model, examples) -> None:
    ex = examples[0]
    result = SQLSolver(model).solve(
        SolverContext.from_df(ex.question, read_wtq_table(ex.table_path))
    )
    assert result.trace[0].action == "sql" and "select" in result.trace[0].code.lower()
    assert result.input_tokens > 100 and result.output_tokens > 5
