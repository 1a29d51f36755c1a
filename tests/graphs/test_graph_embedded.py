"""The graph end to end with the real embedded model on a bundled table (slow)."""

from __future__ import annotations

import pytest
from tablerag_agents.graphs import Context, build_graph

from tablerag_agents.config import Settings
from tablerag_agents.qa import sample_tables_dir
from tablerag_agents.resources import Resources

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.timeout(1800)]


def test_the_graph_answers_with_the_embedded_model_and_cites_cells() -> None:
    table = sample_tables_dir() / "lakes_of_turkey.csv"
    with Resources(Settings(llm_cache=False, max_tokens=300)) as res:
        graph = build_graph(res)
        out = graph.invoke(
            {"question": "Which lake in Turkey is the deepest?", "tables": [res.add_file(table)]},
            context=Context(),
        )
    answer = out["answer"]
    assert answer["text"] == "Lake Van" and not answer["abstained"]
    assert any(c["value"] == "Lake Van" for c in answer["cited_cells"])
    solve = next(r for r in out["trace"] if r["node"] == "solve")
    assert solve["input_tokens"] > 100 and solve["output_tokens"] > 0
