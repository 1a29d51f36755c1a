"""The corpus index on every vector engine: FAISS files, Qdrant (local mode), Milvus Lite.

Each engine must be a drop-in for FAISS: the same hits and scores for every
search method, tables added and removed one at a time, and an index that
reopens from its folder only where the user trusts the engine it names.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from engine_helpers import CountingEmbeddings, engine_or_skip
from test_corpus_index import PASSAGES, TABLES, _table

from tablerag_agents.errors import ConfigError, StaleIndexError, UntrustedEngineError
from tablerag_agents.retrieval.corpus import CorpusIndex
from tablerag_agents.retrieval.corpus_config import CorpusConfig
from tablerag_agents.retrieval.engines import EngineConfig
from tablerag_agents.tables.model import Table

BACKENDS = ["faiss", "qdrant", "milvus"]
METHODS = ["hybrid", "bm25", "bm25_fields", "dense", "rows", "colbert", "rrf"]
QUESTIONS = ["women marathon record", "pianist born 1811", "Etna elevation", "Kenyan runner"]
HOSTILE_ID = 'x"] or pk != "y'
CASTLES = _table(
    "castles_0", "Castles of Scotland", "Highlands", {"Castle": ["Eilean Donan"], "Built": [1220]}
)


def _build(engine: EngineConfig, embeddings, token_encoder, path: Path | None = None):
    return CorpusIndex.build(
        TABLES,
        embeddings,
        config=CorpusConfig(rows=True),
        passages=PASSAGES,
        token_encoder=token_encoder,
        progress=False,
        engine=engine,
        path=path,
    )


def _results(index: CorpusIndex) -> dict[tuple[str, str], list[tuple[str, float]]]:
    return {
        (m, q): [(h.table_id, h.score) for h in index.search(q, k=4, method=m)]
        for m in METHODS
        for q in QUESTIONS
    }


def _same(found: dict, expected: dict) -> None:
    """Same tables in the same order; scores equal up to float32 rounding in the engine."""
    assert found.keys() == expected.keys()
    for key, hits in found.items():
        assert [t for t, _ in hits] == [t for t, _ in expected[key]], key
        assert [s for _, s in hits] == pytest.approx([s for _, s in expected[key]], abs=1e-4), key


@pytest.fixture(scope="module")
def faiss_results(token_encoder_module) -> dict:
    with _build(EngineConfig(), CountingEmbeddings(), token_encoder_module) as index:
        return _results(index)


@pytest.fixture(scope="module")
def token_encoder_module():
    from fakes import word_vector_encoder

    return word_vector_encoder


@pytest.mark.parametrize("backend", ["qdrant", "milvus"])
def test_every_method_gives_the_faiss_hits_and_scores(
    backend, faiss_results, token_encoder, tmp_path: Path
) -> None:
    engine = engine_or_skip(backend, tmp_path)
    with _build(engine, CountingEmbeddings(), token_encoder) as index:
        assert index.engine.backend == backend
        assert type(index.channels["dense"].vectorstore).__name__ != "FaissVectorStore"
        _same(_results(index), faiss_results)


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_new_table_embeds_one_table_and_removal_reaches_every_channel(
    backend, token_encoder, tmp_path: Path
) -> None:
    embeddings = CountingEmbeddings()
    engine = engine_or_skip(backend, tmp_path)
    with _build(engine, embeddings, token_encoder, tmp_path / "idx") as index:
        before = embeddings.documents  # 4 meta texts + their row texts
        assert before == 4 + sum(len(t.df) for t in TABLES)
        index.add_tables([CASTLES], progress=False)
        assert embeddings.documents - before == 1 + 1  # its meta text and its one row
        assert index.search("Castles of Scotland", k=1)[0].table_id == "castles_0"

        assert index.remove_tables(["volcanoes_0", "unknown"]) == 1
        assert embeddings.documents - before == 2  # nothing re-embedded
        for method in METHODS:
            ids = [h.table_id for h in index.search("active volcanoes Etna Italy", 5, method)]
            assert "volcanoes_0" not in ids, method
        with pytest.raises(KeyError):
            index.get_table("volcanoes_0")
        index.save()
    with CorpusIndex.load(
        tmp_path / "idx", embeddings, token_encoder=token_encoder, trust_engine=True
    ) as loaded:
        assert sorted(loaded.table_ids()) == ["castles_0", "marathon_0", "marathon_1", "pianists_0"]
        assert loaded.get_table("castles_0").df["Castle"].tolist() == ["Eilean Donan"]
        for method in METHODS:
            ids = [h.table_id for h in loaded.search("active volcanoes Etna Italy", 5, method)]
            assert "volcanoes_0" not in ids, method
    store = tmp_path / "idx" / "tables"
    assert len(list(store.glob("0*.parquet"))) == 4  # the removed table's file is gone


@pytest.mark.parametrize("backend", ["qdrant", "milvus"])
def test_saved_engine_index_reopens_only_when_trusted_or_named(
    backend, token_encoder, tmp_path: Path
) -> None:
    embeddings = CountingEmbeddings()
    engine = engine_or_skip(backend, tmp_path)
    with _build(engine, embeddings, token_encoder, tmp_path / "idx") as index:
        expected = _results(index)
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert manifest["engine"]["backend"] == backend
    assert manifest["engine_counts"] == {"dense": 4, "rows": 8}
    with pytest.raises(UntrustedEngineError, match="--trust-engine"):
        CorpusIndex.load(tmp_path / "idx", embeddings, token_encoder=token_encoder)
    with CorpusIndex.load(
        tmp_path / "idx", embeddings, token_encoder=token_encoder, engine_url=engine.url
    ) as named:
        _same(_results(named), expected)
    with CorpusIndex.load(
        tmp_path / "idx", embeddings, token_encoder=token_encoder, trust_engine=True
    ) as trusted:
        _same(_results(trusted), expected)


@pytest.mark.parametrize("backend", ["qdrant", "milvus"])
def test_an_add_interrupted_before_save_is_undone_on_load(
    backend, token_encoder, tmp_path: Path
) -> None:
    embeddings = CountingEmbeddings()
    engine = engine_or_skip(backend, tmp_path)
    with _build(engine, embeddings, token_encoder, tmp_path / "idx") as index:
        index.add_tables([CASTLES], progress=False)  # reaches the engine, never saved
    with CorpusIndex.load(
        tmp_path / "idx", embeddings, token_encoder=token_encoder, trust_engine=True
    ) as loaded:
        assert len(loaded.channels["dense"]) == 4 and len(loaded.channels["rows"].inner) == 8
        for method in METHODS:  # the leftover vectors would break score fusion
            ids = [h.table_id for h in loaded.search("Castles of Scotland marathon", 5, method)]
            assert ids and "castles_0" not in ids, method
        loaded.remove_tables(["marathon_0"])  # reaches the engine, never saved
    with pytest.raises(StaleIndexError, match="dense vectors"):
        CorpusIndex.load(
            tmp_path / "idx", embeddings, token_encoder=token_encoder, trust_engine=True
        )


@pytest.mark.parametrize("backend", BACKENDS)
def test_hostile_table_id_is_never_an_engine_key_or_filter(
    backend, token_encoder, tmp_path: Path
) -> None:
    tables = [
        Table(HOSTILE_ID, pd.DataFrame({"Peak": ["Etna"]}), "Volcano peaks", {}),
        Table("keep", pd.DataFrame({"Lake": ["Tuz"]}), "Lakes of Turkey", {}),
    ]
    engine = engine_or_skip(backend, tmp_path)
    with CorpusIndex.build(
        tables, CountingEmbeddings(), progress=False, engine=engine, token_encoder=token_encoder
    ) as index:
        assert index.search("volcano peaks", k=1, method="dense")[0].table_id == HOSTILE_ID
        index.remove_tables([HOSTILE_ID])
        assert [h.table_id for h in index.search("volcano lakes", k=5, method="dense")] == ["keep"]


@pytest.mark.parametrize("backend", ["qdrant", "milvus"])
def test_new_index_refuses_a_collection_that_holds_vectors(
    backend, token_encoder, tmp_path: Path
) -> None:
    engine = engine_or_skip(backend, tmp_path)
    with _build(engine, CountingEmbeddings(), token_encoder):
        pass
    with pytest.raises(ConfigError, match="already holds collection 't_dense'"):
        _build(engine, CountingEmbeddings(), token_encoder)


def test_subset_copies_vectors_without_embedding(token_encoder) -> None:
    embeddings = CountingEmbeddings()
    index = _build(EngineConfig(), embeddings, token_encoder)
    before = embeddings.documents
    part = index.subset(["marathon_1", "pianists_0"])
    assert embeddings.documents == before
    assert sorted(part.table_ids()) == ["marathon_1", "pianists_0"]
    for method in METHODS:
        hits = part.search("women marathon record", k=5, method=method)
        assert {h.table_id for h in hits} <= {"marathon_1", "pianists_0"}
        assert hits[0].table_id == "marathon_1"
        full = {h.table_id: h.score for h in index.search("women marathon record", 4, method)}
        if method in ("dense", "colbert"):  # per-doc scores are copied, not recomputed
            assert hits[0].score == pytest.approx(full["marathon_1"])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"backend": "chroma", "url": "x", "collection": "c"}, "unknown vector backend"),
        ({"backend": "qdrant", "url": "x", "collection": "a; drop"}, "collection name"),
        ({"backend": "milvus", "url": "notes.txt", "collection": "c"}, "must end in .db"),
        ({"backend": "qdrant", "url": "x", "extra": 1}, "malformed 'engine'"),
        ({"backend": "faiss", "url": "http://203.0.113.9:6333"}, "no URL"),
    ],
)
def test_malformed_engine_entries_are_refused(data, message, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=message):
        EngineConfig.from_manifest(data, tmp_path)


def test_local_paths_are_saved_relative_to_the_index(tmp_path: Path) -> None:
    engine = EngineConfig("milvus", str(tmp_path / "idx" / "vectors.db"), "c")
    saved = engine.to_manifest(tmp_path / "idx")
    assert saved["url"] == "vectors.db"
    moved = EngineConfig.from_manifest(saved, tmp_path / "moved")
    assert moved.url == str((tmp_path / "moved" / "vectors.db").resolve())


def test_resources_open_an_engine_index_only_when_this_user_trusts_it(tmp_path: Path) -> None:
    from tablerag_agents.config import Settings
    from tablerag_agents.resources import Resources
    from tablerag_agents.retrieval.engine_trust import remember

    embeddings = CountingEmbeddings()
    engine = engine_or_skip("milvus", tmp_path)
    CorpusIndex.build(
        TABLES, embeddings, progress=False, engine=engine, path=tmp_path / "idx"
    ).close()
    settings = Settings(cache_dir=tmp_path / "cache")
    with Resources(settings, embeddings=embeddings) as res, pytest.raises(UntrustedEngineError):
        res.corpus(tmp_path / "idx")
    remember(settings.cache_dir, tmp_path / "idx", CorpusIndex.engine_of(tmp_path / "idx"))
    with Resources(settings, embeddings=embeddings) as res:
        corpus = res.corpus(tmp_path / "idx")
        assert corpus.search("women marathon record", k=1)[0].table_id == "marathon_1"
