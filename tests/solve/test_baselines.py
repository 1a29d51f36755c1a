"""The reading baselines (ReadSchema, RandRowSampling, RowColRetrieval) on real tables."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from fakes import ScriptedChatModel, WordCountEmbeddings

from tablerag_agents.qa import sample_tables_dir
from tablerag_agents.solve import (
    SOLVER_NAMES,
    RandRowSamplingSolver,
    ReadSchemaSolver,
    ReadTableSolver,
    RowColRetrievalSolver,
    make_solver,
    needs_embeddings,
    needs_sandbox,
)
from tablerag_agents.tables import load_table


@pytest.fixture(scope="module")
def lakes() -> pd.DataFrame:
    """The bundled 50-row WTQ table of Turkish lakes."""
    return load_table(sample_tables_dir() / "lakes_of_turkey.csv").df


def _prompt(model: ScriptedChatModel) -> str:
    return str(model.prompts[0][0].content)


def _data_rows(prompt: str) -> list[str]:
    """Markdown data rows of the prompt (header and separator left out)."""
    rows = [line for line in prompt.splitlines() if line.startswith("|")]
    return [r for r in rows[2:] if not re.fullmatch(r"[|\s:-]+", r)]


def test_read_schema_shows_columns_types_and_examples_only(seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(["Final Answer: 2005"])
    result = ReadSchemaSolver(model).solve("last year in the usl a-league?", seasons)
    prompt = _prompt(model)
    assert "- Year (int): e.g. 2001, 2002, 2003" in prompt
    assert "- Avg. Attendance (int): e.g. 7169, 6260, 5871" in prompt
    assert "- League (text): e.g. USL A-League, USL First Division" in prompt
    # No row of the table: the 2004 and 2005 rows (and their attendances) are not shown.
    assert not any(line.startswith("|") for line in prompt.splitlines())
    assert "5,628" not in prompt and "5628" not in prompt and "2005" not in prompt
    assert result.answer == "2005" and result.solver == "read_schema" and result.iterations == 1
    assert result.input_tokens > 0 and result.output_tokens == 3


def test_read_schema_without_examples_gives_names_and_types(lakes: pd.DataFrame) -> None:
    model = ScriptedChatModel(["Final Answer: Lake Van"])
    ReadSchemaSolver(model, examples=0).solve("deepest lake?", lakes)
    prompt = _prompt(model)
    assert "- Name in English (text)\n" in prompt and "- Depth (text)\n" in prompt
    assert "Lake" not in prompt.replace("deepest lake", "") and "e.g." not in prompt
    with pytest.raises(ValueError, match="examples"):
        ReadSchemaSolver(model, examples=-1)


def test_rand_row_sampling_keeps_the_cell_budget(lakes: pd.DataFrame) -> None:
    model = ScriptedChatModel(["Final Answer: Lake Van"])
    result = RandRowSamplingSolver(model, budget=50, seed=3).solve("deepest lake?", lakes)
    prompt = _prompt(model)
    rows = _data_rows(prompt)
    assert len(rows) == 10  # 50 cells / 5 columns
    assert "(10 of 50 rows, chosen at random)" in prompt
    names = [r.split("|")[1].strip() for r in rows]
    positions = [lakes.index[lakes["Name in English"] == n][0] for n in names]
    assert positions == sorted(positions) and positions != list(range(10))  # table order, random
    assert not result.truncated and result.answer == "Lake Van"


def test_rand_row_sampling_is_stable_for_a_seed(lakes: pd.DataFrame) -> None:
    def shown(seed: int) -> list[str]:
        model = ScriptedChatModel(["Final Answer: x"])
        RandRowSamplingSolver(model, budget=40, seed=seed).solve("q?", lakes)
        return _data_rows(_prompt(model))

    first = shown(7)
    assert first == shown(7) and len(first) == 8
    assert first != shown(8)
    sampler = RandRowSamplingSolver(ScriptedChatModel([]), budget=40, seed=7)
    assert sampler.sample_rows(lakes) == sampler.sample_rows(lakes)


def test_rand_row_sampling_with_a_large_budget_shows_every_row(seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(["Final Answer: 2004"])
    RandRowSamplingSolver(model).solve("q?", seasons)
    prompt = _prompt(model)
    assert len(_data_rows(prompt)) == 5 and "chosen at random" not in prompt
    with pytest.raises(ValueError, match="budget"):
        RandRowSamplingSolver(model, budget=0)


def test_rand_row_sampling_still_fits_the_context_window(lakes: pd.DataFrame) -> None:
    model = ScriptedChatModel(["Final Answer: x"])
    result = RandRowSamplingSolver(model, context_tokens=900, seed=1).solve("q?", lakes)
    assert result.truncated and "table truncated: first" in _prompt(model)
    assert len(_data_rows(_prompt(model))) < 50


def test_row_col_retrieval_keeps_the_closest_rows_and_columns(lakes: pd.DataFrame) -> None:
    model = ScriptedChatModel(["Final Answer: 451 m"])
    solver = RowColRetrievalSolver(model, WordCountEmbeddings(), top_k=2)
    result = solver.solve("What is the Depth of Lake Van in Van Bitlis?", lakes)
    prompt = _prompt(model)
    rows = _data_rows(prompt)
    assert len(rows) == 2 and any("Lake Van" in r for r in rows)
    header = next(line for line in prompt.splitlines() if line.startswith("|"))
    # Two ranked columns plus "Depth", which the question names.
    assert "Depth" in header and header.count("|") - 1 <= 3
    assert "(2 of 50 rows and" in prompt and "closest to the question" in prompt
    assert result.answer == "451 m" and result.solver == "row_col_retrieval"


def test_row_col_retrieval_encodes_at_most_the_budget(lakes: pd.DataFrame) -> None:
    # B = 100 cells over 5 columns: only the first 100 / (2 * 5) = 10 rows are encoded,
    # so the row that matches the question best (row 31, Lake Haçlı) cannot be retrieved.
    model = ScriptedChatModel(["Final Answer: Muş"])
    solver = RowColRetrievalSolver(model, WordCountEmbeddings(), top_k=3, budget=100)
    assert solver.encoded_rows(lakes) == 10
    solver.solve("Where is Lake Haçlı, Haçlı Gölü?", lakes)
    rows = _data_rows(_prompt(model))
    assert len(rows) == 3 and not any("Haçlı" in r for r in rows)
    wide = RowColRetrievalSolver(ScriptedChatModel(["Final Answer: Muş"]), WordCountEmbeddings())
    wide.solve("Where is Lake Haçlı, Haçlı Gölü?", lakes)
    assert any("Haçlı" in r for r in _data_rows(_prompt(wide.model)))  # type: ignore[arg-type]


def test_sentence_prompt_asks_for_one_sentence(seasons: pd.DataFrame) -> None:
    model = ScriptedChatModel(["Final Answer: The team last played in the USL A-League in 2004."])
    result = ReadTableSolver(model, prompt="read_table_sentence").solve("last year?", seasons)
    assert "one complete sentence" in _prompt(model)
    assert result.answer == "The team last played in the USL A-League in 2004"


def test_factory_makes_the_baselines() -> None:
    model = ScriptedChatModel([])
    assert {"read_schema", "rand_row_sampling", "row_col_retrieval"} <= set(SOLVER_NAMES)
    assert isinstance(make_solver("read_schema", model), ReadSchemaSolver)
    assert isinstance(make_solver("rand_row_sampling", model), RandRowSamplingSolver)
    made = make_solver("row_col_retrieval", model, embeddings=WordCountEmbeddings())
    assert isinstance(made, RowColRetrievalSolver)
    with pytest.raises(ValueError, match="needs embeddings"):
        make_solver("row_col_retrieval", model)
    assert needs_embeddings("row_col_retrieval") and not needs_embeddings("read_schema")
    assert not any(needs_sandbox(n) for n in ("read_schema", "rand_row_sampling"))
