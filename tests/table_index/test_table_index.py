"""TableIndex search over several queries, and prompt size flat in table size."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from tablerag_agents.models.tokens import count_tokens
from tablerag_agents.retrieval.base import Doc, Hit, Retriever
from tablerag_agents.table_index.cells import CellEntry
from tablerag_agents.table_index.prompt import build_table_context
from tablerag_agents.table_index.schema import SchemaEntry
from tablerag_agents.table_index.table_index import TableIndex
from tablerag_agents.tables.model import Table


class CosineRetriever(Retriever):
    """Brute-force cosine search: an honest test double for the dense retriever."""

    name = "cosine-test"

    def __init__(self, embeddings: DeterministicFakeEmbedding) -> None:
        self.embeddings = embeddings
        self.docs: list[Doc] = []
        self.matrix = np.zeros((0, embeddings.size))

    def add(self, docs: Sequence[Doc]) -> None:
        vecs = np.array(self.embeddings.embed_documents([d.text for d in docs])).reshape(
            len(docs), -1
        )
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True) + 1e-12
        self.docs.extend(docs)
        self.matrix = np.vstack([self.matrix, vecs])

    def search(self, query: str, k: int = 10) -> list[Hit]:
        q = np.array(self.embeddings.embed_query(query))
        scores = self.matrix @ (q / (np.linalg.norm(q) + 1e-12))
        top = np.argsort(-scores, kind="stable")[:k]
        return [Hit(self.docs[i].id, float(scores[i]), self.docs[i].text) for i in top]

    def __len__(self) -> int:
        return len(self.docs)


def _factory() -> CosineRetriever:
    return CosineRetriever(DeterministicFakeEmbedding(size=64))


def _table(rows: int, seed: int = 0) -> Table:
    rng = np.random.default_rng(seed)
    cities = [f"City {i}" for i in range(min(rows, 300))]
    df = pd.DataFrame(
        {
            "city": rng.choice(cities, rows),
            "team": rng.choice(["Lions", "Tigers", "Bears", "Wolves"], rows),
            "player": [f"Player {i}" for i in range(rows)],
            "goals": rng.integers(0, 40, rows),
            "salary": rng.random(rows) * 1e6,
            "joined": pd.Timestamp("2000-01-01")
            + pd.to_timedelta(rng.integers(0, 8000, rows), "D"),
        }
    )
    df.loc[0, "city"] = "Springfield"
    return Table(id=f"t{rows}", df=df, caption="Football players")


def test_search_merges_queries_and_filters_columns() -> None:
    index = TableIndex.build(_table(200), budget=300, retriever_factory=_factory)
    assert index.stats.n_schema == 6 and index.stats.n_cells == 300
    assert index.stats.n_distinct > 300 and len(index.cell_retriever) == 300
    assert set(index.stats.skipped_columns) == {"goals", "salary", "joined"}
    schema = index.search_schema([index.schema[3].to_text(), index.schema[0].to_text()], k=1)
    assert {e.column for e in schema} == {"goals", "city"}
    cells = index.search_cells(["city: Springfield", "team: Lions", "  ", "team: Lions"], k=1)
    assert {(c.column, c.value) for c in cells} == {("city", "Springfield"), ("team", "Lions")}
    assert len(index.search_cells(["city: Springfield"], k=5)) == 5
    assert len(index.search_cells(["city: Springfield", "team: Lions"], k=5, limit=3)) == 3
    only_team = index.search_cells(["city: Springfield"], k=3, columns=["team"])
    assert only_team and all(c.column == "team" for c in only_team)
    assert index.search_cells([], k=3) == []


def test_bm25_retriever_backend() -> None:
    pytest.importorskip("bm25s")
    index = TableIndex.build(_table(100), retriever="bm25", budget=300)
    hits = index.search_cells(["Springfield"], k=3)
    assert hits[0] == CellEntry("city", "Springfield", 1)
    assert index.search_schema(["how many goals"], k=1)[0].column == "goals"


def test_prompt_context_content() -> None:
    table = _table(100)
    index = TableIndex.build(table, budget=1000, retriever_factory=_factory)
    schema = [e for e in index.schema if e.column in ("city", "goals")]
    cells = [CellEntry("city", "Springfield", 1), CellEntry("team", "Lions", 30)]
    text = build_table_context(table, schema, cells)
    assert text.splitlines()[:3] == [
        "Table: Football players",
        "Size: 100 rows x 6 columns",
        "Relevant columns:",
    ]
    assert '"column_name": "goals", "dtype": "int"' in text and '"min": "' in text
    assert '- city: "Springfield"' in text and '- team: "Lions"' in text
    empty = build_table_context(table, [], [])
    assert "(none retrieved)" in empty


def test_prompt_tokens_stay_flat_as_the_table_grows() -> None:
    questions = ["How many goals did the Lions score in Springfield?", "city: Springfield"]
    sizes = {}
    for rows in (100, 100_000):
        table = _table(rows)
        index = TableIndex.build(table, budget=2000, retriever_factory=_factory)
        schema = index.search_schema(questions, k=3)
        cells = index.search_cells(questions, k=5)
        sizes[rows] = count_tokens(build_table_context(table, schema, cells))
    assert sizes[100_000] <= 1.1 * sizes[100], sizes
    assert table.n_cells == 600_000


def test_count_tokens() -> None:
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    assert count_tokens("representationalism") == 3  # 19 letters: 1 + 18 // 8
    assert count_tokens("1234567") == 3 and count_tokens("a|b\nc") == 5
    assert count_tokens("東京") == 2

    class Splitter:
        def encode(self, text: str) -> list[str]:
            return list(text)

    assert count_tokens("abc", tokenizer=Splitter()) == 3


class ScriptedRetriever(Retriever):
    """Returns fixed hits per query (to test merging without embeddings)."""

    def __init__(self, script: dict[str, list[Hit]], size: int) -> None:
        self.script, self.size = script, size

    def add(self, docs: Sequence[Doc]) -> None:
        raise AssertionError("not used")

    def search(self, query: str, k: int = 10) -> list[Hit]:
        return self.script.get(query, [])[:k]

    def __len__(self) -> int:
        return self.size


def test_merge_keeps_best_score_per_entry() -> None:
    table = _table(20)
    full = TableIndex.build(table, budget=50, retriever_factory=_factory)
    cells = ScriptedRetriever(
        {
            "q1": [Hit("c0", 0.5), Hit("c1", 0.4)],
            "q2": [Hit("c1", 0.9), Hit("c2", 0.1)],
        },
        size=len(full.cells.entries),
    )
    index = TableIndex(table, full.schema, full.cells, full.schema_retriever, cells)
    merged = index.search_cells(["q1", "q2"], k=2)
    entries = full.cells.entries
    assert merged == [entries[1], entries[0], entries[2]]
    assert index.search_cells(["q1", "q2"], k=2, limit=1) == [entries[1]]


def test_prompt_context_caps_hits() -> None:
    table = _table(50)
    schema = [SchemaEntry(f"col{i}", "text", 1, 0, ("v",)) for i in range(60)]
    cells = [CellEntry("team", f"Team {i}", 1) for i in range(100)]
    text = build_table_context(table, schema, cells, max_schema=4, max_cells=7)
    assert text.count('"column_name"') == 4
    assert text.count('"Team ') == 7
    default = build_table_context(table, schema, cells)
    assert default.count('"column_name"') == 10 and default.count('"Team ') == 30
