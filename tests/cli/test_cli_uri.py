"""`tablerag ask/index --uri URL --table NAME`: tables answered where they live in a database."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes import BagOfWordsEmbeddings, ScriptedChatModel, sql_reply
from typer.testing import CliRunner

from tablerag_agents import qa
from tablerag_agents.cli import app
from tablerag_agents.resources import Resources
from tablerag_agents.retrieval import corpus_folder

runner = CliRunner()
REGIONS = {"north": 120, "south": 90, "east": 60, "west": 30}
SAMPLE = 20  # rows of a database table kept in memory: far fewer than the table has
SECRET = "s3cret-pw"
SQL_ONLY = ["--solver", "sql", "--set", "retry_solvers=[]", "--json"]


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A SQLite file: ``orders`` (300 rows, regions by REGIONS) and ``cities`` (4 rows)."""
    monkeypatch.setenv("TABLERAG_SOURCE_SAMPLE_ROWS", str(SAMPLE))
    path = tmp_path / "shop.db"
    regions = [r for r, n in REGIONS.items() for _ in range(n)]
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE orders (order_id INTEGER, region TEXT, quantity INTEGER)")
        conn.executemany(
            "INSERT INTO orders VALUES (?, ?, ?)",
            [(i, regions[(i * 7) % len(regions)], 1 + i % 9) for i in range(len(regions))],
        )
        conn.execute("CREATE TABLE cities (city TEXT, country TEXT, population INTEGER)")
        conn.executemany(
            "INSERT INTO cities VALUES (?, ?, ?)",
            [("Lyon", "France", 522), ("Porto", "Portugal", 232), ("Graz", "Austria", 291)],
        )
    conn.close()
    return path


def _url(path: Path, password: str | None = None) -> str:
    """``sqlite:////abs/path`` (with a user and password when given: SQLite ignores them)."""
    return f"sqlite://reader:{password}@/{path}" if password else f"sqlite:///{path}"


@pytest.fixture
def fake_models(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Resources]]:
    """Make `ask` use scripted models and `index`/`search` fake embeddings (never real models).

    Yields a list: append the run's :class:`Resources` with :func:`_script`.
    """
    monkeypatch.setattr(corpus_folder, "get_embeddings", lambda settings: BagOfWordsEmbeddings())
    made: list[Resources] = []
    monkeypatch.setattr(qa, "default_resources", lambda: made[-1])
    yield made
    for res in made:
        res.close()


def _script(made: list[Resources], *replies: str) -> ScriptedChatModel:
    model = ScriptedChatModel(list(replies))
    made.append(Resources(chat_model=model, embeddings=BagOfWordsEmbeddings()))
    return model


def _answer(result: object) -> dict:
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    return json.loads(result.stdout)["answer"]  # type: ignore[attr-defined]


def test_ask_queries_a_database_table_where_it_lives(
    shop: Path, fake_models: list[Resources]
) -> None:
    model = _script(fake_models, sql_reply("SELECT count(*) FROM t WHERE region = 'north'"))
    question = "how many orders came from the north?"
    result = runner.invoke(app, ["ask", question, "--uri", _url(shop), "-t", "orders", *SQL_ONLY])
    answer = _answer(result)
    # 120 rows in the database; the 20-row sample in memory holds far fewer.
    assert answer["text"] == str(REGIONS["north"]) and answer["table_ids"] == ["orders"]
    assert "region" in str(model.prompts[0]) and model.remaining == 0


def test_ask_over_several_tables_uses_the_one_the_question_is_about(
    shop: Path, fake_models: list[Resources]
) -> None:
    _script(fake_models, sql_reply("SELECT city FROM t ORDER BY population DESC LIMIT 1"))
    result = runner.invoke(
        app,
        [
            "ask",
            "which city has the largest population?",
            "--uri",
            _url(shop),
            "--table",
            "orders",
            "--table",
            "cities",
            *SQL_ONLY,
        ],
    )
    answer = _answer(result)
    assert answer["table_ids"] == ["cities"] and answer["text"] == "Lyon"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--uri", "URL"], "name the database's tables: --table NAME"),
        (["--uri", "shop.db", "--table", "orders"], "--uri wants a database URL"),
        (["--table", "a.csv", "--table", "b.csv"], "give one --table FILE"),
        ([], "give exactly one of --table FILE or --index DIR (or --uri URL --table NAME)"),
    ],
)
def test_ask_usage_errors(shop: Path, args: list[str], message: str) -> None:
    args = [_url(shop) if a == "URL" else a for a in args]
    result = runner.invoke(app, ["ask", "how many orders?", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def test_ask_unknown_table_and_unsupported_database(shop: Path) -> None:
    unknown = runner.invoke(app, ["ask", "q?", "--uri", _url(shop), "--table", "missing"])
    assert unknown.exit_code == 1, unknown.output
    assert "no such table 'missing'; tables are ['cities', 'orders']" in unknown.output
    mysql = runner.invoke(app, ["ask", "q?", "--uri", f"mysql://u:{SECRET}@h/db", "-t", "x"])
    assert mysql.exit_code == 1, mysql.output
    assert "unsupported database 'mysql'" in mysql.output and "u:***@h/db" in mysql.output
    assert SECRET not in mysql.output


def test_index_database_tables_then_search_and_ask(
    shop: Path, tmp_path: Path, fake_models: list[Resources]
) -> None:
    out = tmp_path / "index"
    url = _url(shop)
    built = runner.invoke(
        app, ["index", "--uri", url, "-t", "orders", "-t", "cities", "--out", str(out)]
    )
    assert built.exit_code == 0, built.output
    assert "indexed 2 tables" in built.output
    found = runner.invoke(app, ["search", "city population", "--index", str(out), "--json"])
    assert found.exit_code == 0, found.output
    assert [h["table_id"] for h in json.loads(found.stdout)] == ["cities", "orders"]

    count = sql_reply("SELECT count(*) FROM t WHERE region = 'north'")
    question = ["ask", "how many orders came from the north region?", "--index", str(out)]
    _script(fake_models, count)
    saved = runner.invoke(app, [*question, "--set", "max_tables=1", *SQL_ONLY])
    # Over the index alone the answer comes from the saved 20-row sample: said so.
    assert int(_answer(saved)["text"]) < REGIONS["north"]
    assert "20-row sample" in saved.output and "--uri URL --table orders" in saved.output
    _script(fake_models, count)
    live = runner.invoke(
        app, [*question, "--uri", url, "-t", "orders", "--set", "max_tables=1", *SQL_ONLY]
    )
    answer = _answer(live)
    assert answer["table_ids"] == ["orders"] and answer["text"] == str(REGIONS["north"])
    assert "sample" not in live.output

    _script(fake_models)
    stray = runner.invoke(app, [*question, "--uri", url, "-t", "nope"])
    assert stray.exit_code == 2 and "holds no table 'nope'" in stray.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["PATH", "--uri", "URL", "-t", "orders"], "not both"),
        (["--uri", "URL", "--ottqa", "-t", "orders"], "not both"),
        (["--uri", "URL"], "name the database's tables: --table NAME (repeatable)"),
        (["-t", "orders"], "--table names tables of a database: give its --uri URL too"),
        ([], "give table files or folders (PATHS), or --uri URL --table NAME"),
    ],
)
def test_index_usage_errors(shop: Path, tmp_path: Path, args: list[str], message: str) -> None:
    args = [{"URL": _url(shop), "PATH": str(shop)}.get(a, a) for a in args]
    result = runner.invoke(app, ["index", *args, "--out", str(tmp_path / "ix")])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not (tmp_path / "ix").exists()


def test_index_unknown_table_writes_nothing(shop: Path, tmp_path: Path) -> None:
    out = tmp_path / "ix"
    result = runner.invoke(
        app, ["index", "--uri", _url(shop), "-t", "orders", "-t", "gone", "--out", str(out)]
    )
    assert result.exit_code == 1 and "no such table 'gone'" in result.output
    assert not out.exists()


def test_passwords_are_never_printed_or_saved(
    shop: Path, tmp_path: Path, fake_models: list[Resources]
) -> None:
    url = _url(shop, SECRET)
    out = tmp_path / "index"
    outputs = []
    built = runner.invoke(app, ["-v", "index", "--uri", url, "-t", "orders", "--out", str(out)])
    assert built.exit_code == 0 and "indexed 1 tables" in built.output, built.output
    outputs.append(built.output)
    stored = json.dumps(
        corpus_folder.load_index(out, BagOfWordsEmbeddings(), tmp_path).get_table("orders").metadata
    )
    assert "reader:***@" in stored  # the label names the database, without its password
    for path in out.rglob("*"):
        assert not path.is_file() or SECRET.encode() not in path.read_bytes(), path

    _script(fake_models, sql_reply("SELECT count(*) FROM t"))
    asked = runner.invoke(app, ["-v", "ask", "how many orders?", "--uri", url, "-t", "orders"])
    assert asked.exit_code == 0 and "Answer: 300" in asked.output, asked.output
    outputs.append(asked.output)
    _script(fake_models, sql_reply("SELECT count(*) FROM t"))
    sampled = runner.invoke(app, ["ask", "how many orders?", "--index", str(out)])
    assert "sample the index saved of sqlite://reader:***@" in sampled.output, sampled.output
    outputs.append(sampled.output)
    for bad in (
        [url, "missing"],  # an unknown table
        [f"postgresql://reader:{SECRET}@127.0.0.1:1/shop", "orders"],  # a refused connection
        [f"postgresql://reader:{SECRET}@127.0.0.1:port/shop", "orders"],  # a malformed URL
        # An '@' left unencoded in the password: SQLAlchemy reads the rest as the host.
        [f"postgresql://reader:{SECRET[:3]}@{SECRET[3:]}@127.0.0.1/shop", "orders"],
    ):
        failed = runner.invoke(app, ["ask", "q?", "--uri", bad[0], "-t", bad[1]])
        assert failed.exit_code in (1, 2) and "error:" in failed.output, failed.output
        outputs.append(failed.output)
    assert "reader:***@127.0.0.1:1/shop" in outputs[-3]
    assert "percent-encoded" in outputs[-2] and "percent-encoded" in outputs[-1]
    for output in outputs:
        assert SECRET[3:] not in output


def test_postgresql_table_with_a_password_in_the_url(
    tmp_path: Path, fake_models: list[Resources], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real PostgreSQL (a throwaway cluster; skips without it, except in CI)."""
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed")
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "server"))
    from pg_cluster import PostgresCluster, require_postgres

    monkeypatch.setenv("TABLERAG_SOURCE_SAMPLE_ROWS", str(SAMPLE))
    cluster = PostgresCluster(require_postgres()).start()
    try:
        plain = cluster.create_database()
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute("CREATE TABLE orders (order_id integer, region text)")
            regions = [r for r, n in REGIONS.items() for _ in range(n)]
            with conn.cursor().copy("COPY orders FROM STDIN") as copy:
                for i, region in enumerate(regions):
                    copy.write_row((i, region))
        url = plain.replace(f"{cluster.user}@", f"{cluster.user}:{SECRET}@")  # trust auth
        out = tmp_path / "index"
        built = runner.invoke(app, ["index", "--uri", url, "-t", "public.orders", "-o", str(out)])
        assert built.exit_code == 0 and "indexed 1 tables" in built.output, built.output
        _script(fake_models, sql_reply("SELECT count(*) FROM t WHERE region = 'south'"))
        asked = runner.invoke(app, ["ask", "south orders?", "--uri", url, "-t", "orders"])
        assert asked.exit_code == 0 and f"Answer: {REGIONS['south']}" in asked.output
        missing = runner.invoke(app, ["ask", "q?", "--uri", url, "-t", "nope"])
        assert missing.exit_code == 1 and 'relation "nope" does not exist' in missing.output
        assert f"{cluster.user}:***@" in missing.output
        for output in (built.output, asked.output, missing.output):
            assert SECRET not in output
        for path in out.rglob("*"):
            assert not path.is_file() or SECRET.encode() not in path.read_bytes(), path
    finally:
        cluster.stop()
