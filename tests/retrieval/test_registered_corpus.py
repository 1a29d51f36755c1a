"""The corpus over registered tables (uploads, toolkits) grows and shrinks one table at a time."""

from __future__ import annotations

import pandas as pd
from engine_helpers import CountingEmbeddings

from tablerag_agents.resources import Resources
from tablerag_agents.tables.model import Table


def _table(n: int) -> Table:
    return Table(f"t{n}", pd.DataFrame({"item": [f"item{n}"], "value": [n]}), f"inventory {n}", {})


def test_the_1001st_table_costs_what_the_first_did() -> None:
    embeddings = CountingEmbeddings()
    with Resources(embeddings=embeddings) as res:
        res.add_table(_table(0))
        res.registered_corpus()
        first = embeddings.documents
        for n in range(1, 1000):
            res.add_table(_table(n))
        assert len(res.registered_corpus()) == 1000
        before = embeddings.documents
        res.add_table(Table("deep", pd.DataFrame({"lake": ["Tuz"]}), "Lakes of Turkey", {}))
        corpus = res.registered_corpus()
        assert embeddings.documents - before == first == 1  # one meta text, not 1,001
        assert len(corpus) == 1001
        assert corpus.search("lakes of Turkey", k=1)[0].table_id == "deep"


def test_removal_and_replacement_reindex_only_that_table() -> None:
    embeddings = CountingEmbeddings()
    with Resources(embeddings=embeddings) as res:
        for n in range(5):
            res.add_table(_table(n))
        corpus = res.registered_corpus()
        before = embeddings.documents
        assert res.remove_table("t3")
        assert "t3" not in res.registered_corpus() and len(corpus) == 4
        assert embeddings.documents == before
        res.add_table(_table(2))  # the same table again: nothing to do
        res.registered_corpus()
        assert embeddings.documents == before
        changed = Table("t2", pd.DataFrame({"lake": ["Van"]}), "Lakes of Turkey", {})
        res.add_table(changed)
        assert res.registered_corpus().search("Turkey lakes", k=1)[0].table_id == "t2"
        assert embeddings.documents == before + 1
        assert res.registered_corpus().get_table("t2") is changed


def test_a_scope_is_a_copy_and_never_embeds() -> None:
    embeddings = CountingEmbeddings()
    with Resources(embeddings=embeddings) as res:
        for n in range(6):
            res.add_table(_table(n))
        res.registered_corpus()
        before = embeddings.documents
        scoped = res.registered_corpus(["t1", "t4", "unknown"])
        assert sorted(scoped.table_ids()) == ["t1", "t4"]
        assert scoped.search("inventory 4", k=1)[0].table_id == "t4"
        assert res.registered_corpus(["t4", "t1"]) is scoped  # cached per scope
        res.add_table(_table(9))  # a table outside the scope leaves the copy valid
        assert res.registered_corpus(["t1", "t4"]) is scoped
        res.remove_table("t4")
        assert res.registered_corpus(["t1", "t4"]).table_ids() == ["t1"]
        assert embeddings.documents == before + 1  # only t9
