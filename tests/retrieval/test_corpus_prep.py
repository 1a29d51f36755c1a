"""Per-table preparation for indexing: BM25 tokens of linked pages, each page tokenized once."""

from __future__ import annotations

import pickle

import pandas as pd

from tablerag_agents.retrieval.corpus_config import CorpusConfig
from tablerag_agents.retrieval.corpus_fields import LinkedPassages, passages_text
from tablerag_agents.retrieval.corpus_prep import PrepContext, prepare_table
from tablerag_agents.tables.model import Table

PAGES = {
    "Kenya": "Kenya is a country in East Africa; its capital is Nairobi.",
    "Eliud_Kipchoge": "Eliud Kipchoge is a Kenyan long-distance runner.\nΣΟΦΟΣ ΣΟΦΟΣ",
    "Berlin": "Berlin is the capital of Germany.",
}


def _table(n: int, links: list[str]) -> Table:
    df = pd.DataFrame([["2:01:09", "Eliud Kipchoge"]], columns=["Time", "Name"])
    meta = {"links": [[0, 1, [f"/wiki/{link}" for link in links]]], "section_title": "Men"}
    return Table(f"t{n}", df, f"Marathon records {n}", meta)


def test_passage_tokens_are_those_of_the_joined_text_and_each_page_is_tokenized_once() -> None:
    ctx = PrepContext(CorpusConfig(), LinkedPassages(PAGES))
    seen: list[str] = []
    tokenize = ctx.tokenizer

    def counting(text: str) -> list[str]:
        seen.append(text)
        return tokenize(text)

    ctx.tokenizer = counting  # type: ignore[assignment]
    tables = [
        _table(0, ["Eliud_Kipchoge", "Kenya"]),
        _table(1, ["Kenya", "Nowhere", "Berlin"]),
        _table(2, ["Kenya", "Eliud_Kipchoge"]),
    ]
    prepared = [prepare_table(t, ctx, None) for t in tables]
    for table, prep in zip(tables, prepared, strict=True):
        assert prep.tokens["passages"] == tokenize(passages_text(table, ctx.passages))
        assert prep.fields["passages"] == passages_text(table, ctx.passages)
    assert prepared[0].tokens["passages"][:2] == ["eliud", "kipchog"]
    page_calls = [t for t in seen if t in PAGES.values()]
    assert sorted(page_calls) == sorted(PAGES.values())  # three pages, three calls
    clone = pickle.loads(pickle.dumps(ctx))  # a worker gets no memo, and rebuilds it
    assert clone._page_tokens == {}
    assert prepare_table(tables[2], clone, None).tokens == prepared[2].tokens


def test_no_lookup_gives_no_passage_tokens() -> None:
    prep = prepare_table(_table(0, ["Kenya"]), PrepContext(CorpusConfig()), None)
    assert prep.tokens["passages"] == []
