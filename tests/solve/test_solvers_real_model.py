"""End to end with the real embedded model on one WTQ question per solver (slow).

Too few questions to judge accuracy: these check that the loops run with a
real small model, parse its replies into answers and count tokens. One
question each keeps the suite short (two PyReAct questions took 143 s in CI).
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

QUESTION_ID = "nt-0"  # a small table and a lookup question


@pytest.fixture(scope="module")
def model():
    return get_chat_model(Settings(llm_cache=False, max_tokens=300))


@pytest.fixture(scope="module")
def example(shared_data: Path):
    (found,) = [e for e in load_wtq(shared_data / "wtq" / "training.tsv") if e.id == QUESTION_ID]
    return found


def test_pyreact_with_the_embedded_model(model, sandbox, example) -> None:
    solver = PyReActSolver(model, sandbox, max_iterations=3)
    assert solver.resolved_mode == "text"
    ctx = SolverContext.from_df(example.question, read_wtq_table(example.table_path))
    result = solver.solve(ctx)
    assert result.trace
    assert result.trace[0].action == "python", result.trace[0].raw
    assert 1 <= result.iterations <= 3
    assert result.answer_items, [s.raw for s in result.trace]
    assert result.input_tokens > 200 and result.output_tokens > 5
    assert result.seconds > 0


def test_sql_with_the_embedded_model(model, example) -> None:
    result = SQLSolver(model).solve(
        SolverContext.from_df(example.question, read_wtq_table(example.table_path))
    )
    assert result.trace[0].action == "sql" and "select" in result.trace[0].code.lower()
    assert result.input_tokens > 100 and result.output_tokens > 5
