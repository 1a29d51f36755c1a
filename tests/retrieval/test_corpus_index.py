"""CorpusIndex: build, search methods, persistence, staleness, incremental add."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tablerag_agents.errors import ConfigError, IndexNotFoundError, StaleIndexError
from tablerag_agents.retrieval.corpus import CorpusIndex
from tablerag_agents.retrieval.corpus_config import CorpusConfig, HybridWeights
from tablerag_agents.retrieval.corpus_fields import LinkedPassages, table_fields, table_links
from tablerag_agents.tables.model import Table


def _table(tid: str, caption: str, section: str, columns: dict, links=None) -> Table:
    meta = {"section_title": section, "intro": f"{caption} is a page."}
    if links:
        meta["links"] = links
    return Table(tid, pd.DataFrame(columns), caption, meta)


TABLES = [
    _table(
        "marathon_0",
        "Marathon world record progression",
        "Men",
        {"Time": ["2:01:09", "2:01:39"], "Name": ["Eliud Kipchoge", "Eliud Kipchoge"]},
        links=[[0, 1, ["/wiki/Eliud_Kipchoge"]]],
    ),
    _table(
        "marathon_1",
        "Marathon world record progression",
        "Women",
        {"Time": ["2:11:53", "2:14:04"], "Name": ["Tigst Assefa", "Brigid Kosgei"]},
    ),
    _table(
        "volcanoes_0",
        "List of volcanoes in Italy",
        "Active volcanoes",
        {"Name": ["Etna", "Stromboli"], "Elevation": [3357, 924]},
    ),
    _table(
        "pianists_0",
        "List of classical pianists",
        "Romantic era",
        {"Pianist": ["Franz Liszt", "Clara Schumann"], "Born": [1811, 1819]},
    ),
]
PASSAGES = LinkedPassages({"Eliud_Kipchoge": "Eliud Kipchoge is a Kenyan long-distance runner."})


@pytest.fixture
def index(bow, token_encoder) -> CorpusIndex:
    return CorpusIndex.build(
        TABLES,
        bow,
        config=CorpusConfig(rows=True),
        passages=PASSAGES,
        token_encoder=token_encoder,
        progress=False,
    )


def test_fields_and_links():
    fields = table_fields(TABLES[0], PASSAGES)
    assert fields["meta"] == "Marathon world record progression | Men | Time | Name"
    assert "Eliud Kipchoge | 2:01:09" not in fields["cells"]
    assert fields["cells"].splitlines()[0] == "2:01:09 | Eliud Kipchoge"
    assert fields["passages"] == "Eliud Kipchoge is a Kenyan long-distance runner."
    assert table_links(TABLES[0]) == ["/wiki/Eliud_Kipchoge"]
    assert table_fields(TABLES[1], PASSAGES)["passages"] == ""


@pytest.mark.parametrize(
    "method", ["hybrid", "bm25", "bm25_fields", "dense", "rows", "colbert", "rrf"]
)
def test_every_method_finds_the_volcano_table(index, method):
    hits = index.search("active volcanoes of Italy", k=2, method=method)
    assert hits[0].table_id == "volcanoes_0"
    assert hits[0].caption == "List of volcanoes in Italy"
    assert hits[0].metadata == {"section_title": "Active volcanoes"}


def test_hybrid_uses_sections_cells_and_passages(index):
    assert index.search("women marathon record", k=1)[0].table_id == "marathon_1"
    # "Kenyan" only appears in the linked passage of marathon_0
    hits = index.search("record of the Kenyan runner", k=2, method="bm25_fields")
    assert hits[0].table_id == "marathon_0"
    assert index.search("Clara Schumann", k=1)[0].table_id == "pianists_0"


def test_k_larger_than_corpus_and_unknown_method(index):
    assert len(index.search("marathon", k=50)) == 4
    with pytest.raises(ConfigError):
        index.search("x", method="nope")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        index.search(
            "x",
            weights=HybridWeights(
                **dict.fromkeys(
                    ["meta", "cells", "intro", "passages", "dense", "rows", "colbert"], 0.0
                )
            ),
        )


def test_save_load_identical_results_and_no_pickle(index, bow, token_encoder, tmp_path: Path):
    index.save(tmp_path / "idx")
    files = [p for p in (tmp_path / "idx").rglob("*") if p.is_file()]
    assert files
    for path in files:
        assert path.suffix in {".json", ".parquet", ".npy", ".npz", ".index"}, path
        assert not path.read_bytes()[:2].startswith(b"\x80"), f"{path} looks like a pickle"
        if path.suffix in {".npy", ".npz"}:
            np.load(path, allow_pickle=False)  # raises if an object array (pickle) is inside
    loaded = CorpusIndex.load(tmp_path / "idx", bow, token_encoder=token_encoder)
    assert len(loaded) == 4
    for method in ("hybrid", "bm25", "dense", "rows", "colbert"):
        for question in ("women marathon", "pianist born 1811", "Etna elevation"):
            assert loaded.search(question, k=4, method=method) == index.search(
                question, k=4, method=method
            )
    table = loaded.get_table("volcanoes_0")
    pd.testing.assert_frame_equal(table.df, TABLES[2].df)
    assert table.caption == TABLES[2].caption
    assert table.metadata["section_title"] == "Active volcanoes"


def test_stale_and_missing(index, bow, token_encoder, tmp_path: Path):
    index.save(tmp_path / "idx")
    with pytest.raises(StaleIndexError) as info:
        CorpusIndex.load(tmp_path / "idx", type(bow)(dim=32), token_encoder=token_encoder)
    assert info.value.found["embeddings"] == "bow:64"
    with pytest.raises(StaleIndexError):  # even without a token encoder for its MaxSim channel
        CorpusIndex.load(tmp_path / "idx", type(bow)(dim=32))
    with pytest.raises(StaleIndexError):
        CorpusIndex.load(
            tmp_path / "idx",
            bow,
            config=dataclasses.replace(index.config, k1=1.2),
            token_encoder=token_encoder,
        )
    with pytest.raises(IndexNotFoundError):
        CorpusIndex.load(tmp_path / "missing", bow)


def test_incremental_add_then_save_and_reload(index, bow, token_encoder, tmp_path: Path):
    index.save(tmp_path / "idx")
    loaded = CorpusIndex.load(tmp_path / "idx", bow, token_encoder=token_encoder)
    extra = _table(
        "castles_0",
        "Castles of Scotland",
        "Highlands",
        {"Castle": ["Eilean Donan"], "Built": [1220]},
    )
    assert loaded.add_tables([extra], passages=PASSAGES, progress=False) == 1
    with pytest.raises(ValueError, match="duplicate"):
        loaded.add_tables([extra], progress=False)
    assert loaded.search("Scottish castles in the Highlands", k=1)[0].table_id == "castles_0"
    loaded.save()
    again = CorpusIndex.load(tmp_path / "idx", bow, token_encoder=token_encoder)
    assert len(again) == 5
    assert again.search("Castles of Scotland", k=1)[0].table_id == "castles_0"
    assert again.get_table("castles_0").df["Castle"].tolist() == ["Eilean Donan"]
    assert again.get_table("marathon_1").df["Name"].tolist() == ["Tigst Assefa", "Brigid Kosgei"]


def test_as_langchain_retriever(index):
    docs = index.retriever("hybrid").as_langchain_retriever(k=1).invoke("Liszt pianist")
    assert [d.id for d in docs] == ["pianists_0"]
