"""Table representation (seed 001) and table rendering for prompts."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from tablerag_agents.tables.model import Table
from tablerag_agents.tables.render import render_table
from tablerag_agents.tables.representation import (
    TableRepresentation,
    anonymize_columns,
    represent_table,
    restore_columns,
)


def _table() -> Table:
    df = pd.DataFrame(
        {
            "Year": [1931, 1932, 1933, 1934, 1934],
            "League": ["ASL", "ASL", "ASL", "ASL", "ASL"],
            "Result": ["1st", "2nd", "x" * 80, "4th", "5th"],
        }
    )
    return Table("nya", df, "New York Americans", {"section_title": "Seasons"})


def test_representation_caps_values_and_serialises() -> None:
    rep = represent_table(_table(), max_values=3, max_value_chars=10)
    year, league, result = rep.columns
    assert (year.dtype, year.n_unique, year.values) == ("int", 4, ["1934", "1931", "1932"])
    assert league.values == ["ASL"] and league.n_unique == 1
    assert len(result.values) == 3 and all(len(v) <= 10 for v in result.values)
    assert "x" * 9 + "…" in result.values
    assert rep.context == "Seasons" and rep.description == "" and not rep.anonymized
    text = rep.to_text()
    assert text.startswith("New York Americans\nSeasons\nColumns: Year (int), League (text)")
    assert "League: ASL" in text
    prompt = rep.to_prompt()
    assert "Size: 5 rows x 3 columns" in prompt
    assert '- "Year": int; values ["1934", "1931", "1932"] (of 4 distinct); 0 missing' in prompt
    again = TableRepresentation.from_dict(json.loads(json.dumps(rep.to_dict())))
    assert again == rep


def test_anonymisation_round_trip() -> None:
    table = _table()
    renamed, mapping = anonymize_columns(table.df)
    assert list(renamed.columns) == ["Col1", "Col2", "Col3"]
    assert mapping == {"Col1": "Year", "Col2": "League", "Col3": "Result"}
    assert restore_columns(renamed, mapping).equals(table.df)
    # A sub-result computed on placeholder names maps back too.
    sub = renamed[["Col3", "Col1"]].head(2)
    assert list(restore_columns(sub, mapping).columns) == ["Result", "Year"]
    assert list(table.df.columns) == ["Year", "League", "Result"]  # original untouched
    rep = represent_table(table, anonymize=True)
    assert [c.name for c in rep.columns] == ["Col1", "Col2", "Col3"]
    assert rep.map_back("Col2") == "League" and rep.map_back("Other") == "Other"
    assert '- "Col1" (about "Year"): int' in rep.to_prompt()
    assert "Columns: Year (int)" in rep.to_text()  # indexing keeps the real names


class RecordingChatModel(FakeListChatModel):
    """Fake chat model that remembers the prompts it got."""

    prompts: list[str] = []

    def _call(self, messages: list[Any], *args: Any, **kwargs: Any) -> str:
        self.prompts.append(messages[-1].content)
        return super()._call(messages, *args, **kwargs)


def test_llm_description_uses_the_prompt_file() -> None:
    model = RecordingChatModel(responses=["  A table of\nseasons.  "], prompts=[])
    rep = represent_table(_table(), model=model, anonymize=True)
    assert rep.description == "A table of seasons."
    prompt = model.prompts[0]
    # Wording lives in prompts/describe_table.txt; the filled-in fields are ours.
    assert "New York Americans" in prompt and "Context: Seasons" in prompt
    assert "- Col1 (Year): int, e.g. 1934, 1931, 1932" in prompt
    assert "| Col1 | Col2 | Col3 |" in prompt
    assert "Description: A table of seasons." in rep.to_prompt()


def test_render_table_formats() -> None:
    df = pd.DataFrame({"a|b": [1, 2, 3], "c": ["x\ny", "p|q", None], "d": [1.5, None, 3.0]})
    md = render_table(df, "markdown", max_rows=2)
    assert md.splitlines() == [
        "| a\\|b | c | d |",
        "|---|---|---|",
        "| 1 | x<br>y | 1.5 |",
        "| 2 | p\\|q |  |",
        "[... 1 more row]",
    ]
    assert render_table(df, "csv", max_rows=None).splitlines()[0] == "a|b,c,d"
    html = render_table(pd.DataFrame({"<b>": ["<i>&"]}), "html")
    assert "<th>&lt;b&gt;</th>" in html and "<td>&lt;i&gt;&amp;</td>" in html
    text = render_table(df, "string", max_cols=1, index=True)
    assert text.splitlines()[0].split() == ["row", "a|b"] and text.endswith("[... 2 more columns]")
    assert render_table(pd.DataFrame({"t": ["abcdefgh"]}), max_cell_chars=4).endswith("| abc… |")
    with pytest.raises(ValueError, match="unknown table format 'latex'"):
        render_table(df, "latex")  # type: ignore[arg-type]
