"""Tables left in a SQLite database: indexes by aggregates, SQL in a read-only session."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import BagOfWordsEmbeddings
from source_checks import assert_same_indexes_as_pandas, assert_solver_counts_all_rows
from source_data import N_ROWS, QUANTITIES, row_count
from tablerag_agents.tools import TableRAGToolkit

from tablerag_agents.errors import TableLoadError
from tablerag_agents.solve.sql_engine import SourceSQL
from tablerag_agents.table_index import TableIndex
from tablerag_agents.tables import load_table
from tablerag_agents.tables.source import SourceSettings
from tablerag_agents.tables.source_remote import DatabaseSource

SMALL = SourceSettings(sample_rows=20)


def test_load_table_keeps_the_table_in_the_database(sqlite_url: str) -> None:
    table = load_table(sqlite_url, table="sales", source_settings=SMALL)
    assert table.source is not None
    assert table.id == "sales" and len(table.df) == 20
    assert list(table.df.columns) == ["order_id", "region", "product", "quantity", "price", "note"]
    assert table.n_rows == N_ROWS and table.n_cols == 6


def test_indexes_are_the_pandas_ones(sqlite_url: str) -> None:
    assert_same_indexes_as_pandas(load_table(sqlite_url, table="sales", source_settings=SMALL))


def test_table_index_builds_from_the_source(sqlite_url: str) -> None:
    table = load_table(sqlite_url, table="sales", source_settings=SMALL)
    index = TableIndex.build(table, retriever="bm25")
    assert index.stats.n_cells == 5 + 12 + 10
    assert index.stats.skipped_columns["note"].startswith("free text")
    hits = index.search_cells(["centre"], k=1)
    assert [(h.column, h.value, h.count) for h in hits] == [("region", "centre", 40)]


def test_sql_solver_counts_every_row(sqlite_url: str) -> None:
    assert_solver_counts_all_rows(load_table(sqlite_url, table="sales", source_settings=SMALL))


def test_a_write_is_refused_by_the_read_only_connection(sqlite_url: str, sqlite_path: Path) -> None:
    source = DatabaseSource(sqlite_url, "sales", settings=SMALL)
    # Straight to the source, past the text check: the connection itself refuses.
    for statement in ("DELETE FROM sales", "WITH x AS (SELECT 1) UPDATE sales SET region = 'x'"):
        outcome = source.query(statement, names=["t"], timeout_s=5, max_rows=10, max_cells=100)
        assert not outcome.ok
        assert "readonly" in (outcome.error or "").replace("-", "").lower()
    rejected = SourceSQL(source, ["t"]).run("DROP TABLE sales")
    assert rejected.error_type == "SQLRejectedError"
    assert row_count(sqlite_path) == N_ROWS


def test_query_limits(sqlite_url: str) -> None:
    engine = SourceSQL(DatabaseSource(sqlite_url, "sales", settings=SMALL), ["t"], max_rows=50)
    capped = engine.run("SELECT order_id FROM t ORDER BY order_id")
    assert capped.ok and capped.truncated and len(capped.rows) == 50
    assert capped.rows[-1] == (50,)
    engine.timeout_s = 1.0
    endless = engine.run(
        "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT max(x) FROM r"
    )
    assert endless.timed_out and endless.error_type == "Timeout"
    assert engine.run("SELECT count(*) FROM other").rows == [(1,)]  # the database's own tables


def test_bad_urls_and_tables(sqlite_url: str, tmp_path: Path) -> None:
    with pytest.raises(TableLoadError, match="unsupported database 'mysql'"):
        DatabaseSource("mysql://u:secret@host/db", "t")
    with pytest.raises(TableLoadError, match="no SQLite file") as missing:
        DatabaseSource(f"sqlite:///{tmp_path / 'nope.db'}", "t")
    assert "secret" not in str(missing.value)
    with pytest.raises(TableLoadError, match="no such table"):
        load_table(sqlite_url, table="missing")
    with pytest.raises(TableLoadError, match="name the table"):
        load_table(sqlite_url)


def test_toolkit_from_uri_queries_the_database(sqlite_url: str) -> None:
    with TableRAGToolkit.from_uri(
        sqlite_url, tables=["sales"], embeddings=BagOfWordsEmbeddings(), source_settings=SMALL
    ) as toolkit:
        tool = toolkit.get_tool("sql_query")
        text = tool.invoke({"query": "SELECT sum(quantity) AS total FROM sales"})
        assert "total" in text
        assert str(sum(q * n for q, n in QUANTITIES.items())) in text
        described = toolkit.get_tool("describe_table").invoke({"table": "sales"})
        assert f"Size: {N_ROWS} rows x 6 columns" in described
        assert "first 20 rows only" in described


def test_ask_tables_answers_from_the_whole_database_table(sqlite_url: str) -> None:
    """The graph's SQL runs on the database, not on the 20-row sample in ``Table.df``."""
    from fakes import ScriptedChatModel, sql_reply
    from tablerag_agents.graphs import Context

    model = ScriptedChatModel([sql_reply("SELECT count(*) FROM t WHERE \"region\" = 'north'")])
    with TableRAGToolkit.from_uri(
        sqlite_url,
        tables=["sales"],
        chat_model=model,
        embeddings=BagOfWordsEmbeddings(),
        source_settings=SMALL,
        ask_context=Context(solver="sql", retry_solvers=[]),
    ) as toolkit:
        message = toolkit.get_tool("ask_tables").invoke(
            {"question": "how many orders came from the north region?", "tables": ["sales"]}
        )
    assert message.startswith("Answer: 250")


def test_the_graph_never_joins_a_database_table_with_others(sqlite_url: str) -> None:
    """SQL on the database cannot see a pandas table, nor the reverse: one side only."""
    import pandas as pd
    from tablerag_agents.graphs import Context
    from tablerag_agents.graphs.nodes.solve import solver_context

    from tablerag_agents.tables import Table

    sales = load_table(sqlite_url, table="sales", source_settings=SMALL)
    other = Table("regions", pd.DataFrame({"region": ["north"], "manager": ["Ann"]}))

    class Tables:
        def table(self, ref: str, ctx: Context) -> Table:
            return {"sales": sales, "regions": other}[ref]

    def context_for(ids: list[str]):  # type: ignore[no-untyped-def]
        state = {"question": "how many orders?", "table_ids": ids}
        return solver_context(state, Context(), Tables())  # type: ignore[arg-type]

    first = context_for(["sales", "regions"])
    assert list(first.tables) == ["sales"] and list(first.sources) == ["sales"]
    second = context_for(["regions", "sales"])
    assert list(second.tables) == ["regions"] and second.sources == {}


def test_corpus_index_takes_database_tables(sqlite_url: str, tmp_path: Path) -> None:
    from tablerag_agents.retrieval.corpus import CorpusIndex
    from tablerag_agents.tables.source_tables import load_database_tables

    tables = load_database_tables(sqlite_url, ["sales", "other"], settings=SMALL)
    index = CorpusIndex.build(
        tables, BagOfWordsEmbeddings(), path=tmp_path / "index", progress=False
    )
    hits = index.search("which region and product had the largest quantity?", k=1)
    assert [h.table_id for h in hits] == ["sales"]
    stored = CorpusIndex.load(tmp_path / "index", BagOfWordsEmbeddings()).get_table("sales")
    assert stored.metadata["source"] == f"{sqlite_url}#sales"
    assert len(stored.df) == 20  # the sample: the rows stay in the database
