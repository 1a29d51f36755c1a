"""Issue 10 item 1: a crafted DuckDB or SQLite file cannot read host files or run side effects.

The attacker controls the table file (views, triggers, schema); loading it must
never read another file, load an extension or attach a database, and the refusal
is a :class:`TableLoadError` naming the table file.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb
import pytest

from tablerag_agents.errors import TableLoadError
from tablerag_agents.tables.loaders import load_table

SECRET = "host-secret-7f3a9c"


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    """A host file the table file must not be able to read."""
    path = tmp_path / "outside" / "secret.txt"
    path.parent.mkdir()
    path.write_text(SECRET + "\n", encoding="utf-8")
    return path


def _duckdb_with_view(path: Path, view_sql: str) -> Path:
    conn = duckdb.connect(str(path))
    conn.execute(f"CREATE VIEW t AS {view_sql}")
    conn.close()
    return path


@pytest.mark.parametrize(
    "view_sql",
    [
        "SELECT * FROM read_text('{secret}')",
        "SELECT * FROM read_csv('{secret}', header = false)",
        "SELECT * FROM read_blob('{secret}')",
        "SELECT * FROM glob('{folder}/*')",
    ],
    ids=["read_text", "read_csv", "read_blob", "glob"],
)
def test_duckdb_view_reading_host_files_is_refused(
    tmp_path: Path, secret_file: Path, view_sql: str
) -> None:
    sql = view_sql.format(secret=secret_file, folder=secret_file.parent)
    source = _duckdb_with_view(tmp_path / "evil.duckdb", sql)
    with pytest.raises(TableLoadError) as info:
        load_table(source)
    assert info.value.source == str(source)
    assert info.value.reason.startswith("refused: the table reads outside the file")
    assert "disabled by configuration" in info.value.reason
    assert SECRET not in str(info.value)


def test_duckdb_macro_in_the_file_runs_locked_down(tmp_path: Path, secret_file: Path) -> None:
    # A macro stored in the file is the only user code run at load time: it still
    # runs under the locked configuration.
    path = tmp_path / "macro.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute("CREATE MACRO grab(p) AS TABLE SELECT * FROM read_text(p)")
    conn.execute(f"CREATE VIEW t AS SELECT * FROM grab('{secret_file}')")
    conn.close()
    with pytest.raises(TableLoadError, match="disabled by configuration"):
        load_table(path)


def test_duckdb_ordinary_tables_still_load_and_file_is_untouched(tmp_path: Path) -> None:
    path = tmp_path / "ok.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute("CREATE TABLE lakes AS SELECT 'Tuz' AS lake, 1.5 AS depth")
    conn.execute("CREATE VIEW deep AS SELECT lake FROM lakes WHERE depth > 1")
    conn.close()
    before = path.read_bytes()
    assert load_table(path, table="lakes").df.to_dict("list") == {
        "lake": ["Tuz"],
        "depth": [1.5],
    }
    assert load_table(path, table="deep").df["lake"].tolist() == ["Tuz"]
    assert path.read_bytes() == before


def _sqlite_with(path: Path, *statements: str) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE base (x INTEGER)")
    conn.execute("INSERT INTO base VALUES (1)")
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize(
    ("view_sql", "reason"),
    [
        ("SELECT load_extension('{lib}') AS x", "load_extension"),
        # Eponymous virtual tables would tell the prompt (and a remote API) about
        # the host: file paths, compile options, functions.
        ("SELECT file FROM pragma_database_list", "pragma_database_list"),
        ("SELECT * FROM pragma_compile_options", "pragma_compile_options"),
    ],
    ids=["load_extension", "database_list", "compile_options"],
)
def test_sqlite_view_with_side_effects_is_refused(
    tmp_path: Path, view_sql: str, reason: str
) -> None:
    lib = tmp_path / "evil.so"
    lib.write_bytes(b"\x7fELF not really")
    source = _sqlite_with(tmp_path / "evil.sqlite", f"CREATE VIEW t AS {view_sql.format(lib=lib)}")
    with pytest.raises(TableLoadError, match=reason) as info:
        load_table(source, table="t")
    assert info.value.source == str(source)
    assert str(tmp_path) not in info.value.reason


def test_sqlite_is_opened_read_only_and_triggers_cannot_fire(tmp_path: Path) -> None:
    # Triggers only fire on writes, which a read-only connection cannot make; the
    # file must come out byte-for-byte identical.
    source = _sqlite_with(
        tmp_path / "t.sqlite",
        "CREATE TABLE log (msg TEXT)",
        "CREATE TRIGGER tr AFTER INSERT ON base BEGIN INSERT INTO log VALUES ('x'); END",
        "CREATE VIEW v AS SELECT x FROM base",
    )
    before = source.read_bytes()
    assert load_table(source, table="v").df["x"].tolist() == [1]
    assert load_table(source, table="base").df["x"].tolist() == [1]
    assert source.read_bytes() == before
    assert not source.with_name("t.sqlite-journal").exists()
