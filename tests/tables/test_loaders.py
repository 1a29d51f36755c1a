"""load_table / load_tables: every format, and every kind of bad input."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from tablerag_agents.errors import TableLoadError
from tablerag_agents.tables.cleaning import TableLoadWarning
from tablerag_agents.tables.loaders import load_table, load_tables


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_csv_sniffs_semicolons_and_keeps_types(tmp_path: Path) -> None:
    p = _write(tmp_path / "prices.csv", 'item;qty;price;note\n a ;1;2.5;"1,234"\nb;3;;NA\n')
    t = load_table(p)
    assert t.id == "prices" and t.caption == "prices"
    assert t.metadata == {"source": str(p), "format": "csv"}
    assert list(t.df.columns) == ["item", "qty", "price", "note"]
    assert t.df["qty"].tolist() == [1, 3]
    assert str(t.df["qty"].dtype) == "int64"
    assert t.df["price"].iloc[0] == 2.5 and pd.isna(t.df["price"].iloc[1])
    # Strings that look like numbers or NA markers are kept as written; whitespace stripped.
    assert t.df["note"].tolist() == ["1,234", "NA"]
    assert t.df["item"].tolist() == ["a", "b"]


def test_iso_dates_become_datetimes_other_dates_stay_text(tmp_path: Path) -> None:
    p = _write(
        tmp_path / "d.csv",
        "day,stamp,month,mixed\n2020-01-31,2020-01-31 10:30,2003-05,2020-01-01\n"
        "2021-12-01,2021-12-01T08:00:00,2004-06,soon\n",
    )
    t = load_table(p)
    assert str(t.df["day"].dtype).startswith("datetime64")
    assert t.df["day"].iloc[0] == pd.Timestamp("2020-01-31")
    assert t.df["stamp"].iloc[1] == pd.Timestamp("2021-12-01 08:00")
    assert t.df["month"].tolist() == ["2003-05", "2004-06"]
    assert t.df["mixed"].tolist() == ["2020-01-01", "soon"]
    assert load_table(p, iso_dates=False).df["day"].tolist() == ["2020-01-31", "2021-12-01"]


def test_tsv_and_explicit_id_caption(tmp_path: Path) -> None:
    p = _write(tmp_path / "t.tsv", "a b\tc,d\n1\tx, y\n")
    t = load_table(p, id="my-id", caption="My table")
    assert (t.id, t.caption) == ("my-id", "My table")
    assert list(t.df.columns) == ["a b", "c,d"]
    assert t.df.iloc[0].tolist() == [1, "x, y"]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.csv", b"", "file is empty"),
        ("blank.csv", b"  \n\n", "file is empty"),
        ("header.csv", b"a,b,c\n", "table has no rows"),
        ("image.csv", b"\x89PNG\r\n\x1a\n" + bytes(range(256)), r"binary \(a PNG image\)"),
        ("noise.csv", os.urandom(4096) + b"\x00", "binary"),
        ("ctrl.csv", bytes([1, 2, 3, 4, 5, 6, 7, 8]) * 100, "control bytes"),
        ("notes.txt", b"a,b\n1,2\n", "unknown extension '.txt'"),
        ("bad.json", b'{"a": ', "not valid JSON"),
        ("scalar.json", b"42", "JSON holds a int, not a table"),
        ("rows.json", b"[]", "table has no rows"),
        ("garbage.db", os.urandom(200), "not a SQLite database"),
        ("garbage.duckdb", b"not a duckdb file" * 20, "cannot open DuckDB file"),
        ("garbage.parquet", b"PAR0" + os.urandom(100), "not a readable Parquet file"),
        ("garbage.xlsx", os.urandom(200), "not a readable .xlsx workbook"),
    ],
)
def test_bad_files_raise_naming_the_file(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    p = tmp_path / name
    p.write_bytes(content)
    with pytest.raises(TableLoadError, match=message) as info:
        load_table(p)
    assert info.value.source == str(p)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(TableLoadError, match="no such file"):
        load_table(tmp_path / "nope.csv")
    with pytest.raises(TableLoadError, match="is a directory"):
        load_table(tmp_path)
    with pytest.raises(TableLoadError, match="expected a path or a DataFrame, got int"):
        load_table(3)  # type: ignore[arg-type]
    with pytest.raises(TableLoadError, match="unknown format 'xml'"):
        load_table(_write(tmp_path / "a.csv", "a\n1\n"), format="xml")


def test_duplicate_and_empty_column_names(tmp_path: Path) -> None:
    p = _write(tmp_path / "dup.csv", "a,a,,b,a_2,\n1,2,3,4,5,6\n")
    with pytest.warns(TableLoadWarning) as record:
        t = load_table(p)
    assert list(t.df.columns) == ["a", "a_3", "column_3", "b", "a_2", "column_6"]
    messages = " | ".join(str(w.message) for w in record)
    assert "duplicate column name 'a' renamed to 'a_3'" in messages
    assert "column 3: empty name replaced by 'column_3'" in messages
    assert t.df.iloc[0].tolist() == [1, 2, 3, 4, 5, 6]


def test_hostile_column_names_are_kept_as_clean_data(tmp_path: Path) -> None:
    long_name = "L" * 300
    header = f'"""); DROP TABLE x; --","a\nb\tc","__import__(\'os\')","{long_name}"'
    p = _write(tmp_path / "hostile.csv", header + "\n1,2,3,4\n")
    with pytest.warns(TableLoadWarning) as record:
        t = load_table(p)
    assert list(t.df.columns) == ['"); DROP TABLE x; --', "a b c", "__import__('os')", "L" * 100]
    messages = " | ".join(str(w.message) for w in record)
    assert "removed control characters/newlines" in messages
    assert "name of 300 chars cut to 100" in messages


def test_rows_with_too_many_fields_are_reported(tmp_path: Path) -> None:
    p = _write(tmp_path / "ragged.csv", "a,b\n1,2\n3,4,5\n6\n8,9,10,11\n")
    with pytest.warns(
        TableLoadWarning, match=r"dropped 2 row\(s\) with more than 2 fields \(lines 3, 5\)"
    ):
        t = load_table(p)
    assert t.df["a"].tolist() == [1, 6]
    assert t.df["b"].iloc[0] == 2 and pd.isna(t.df["b"].iloc[1])  # short rows are padded


def test_huge_cell_is_truncated_or_kept(tmp_path: Path) -> None:
    p = _write(tmp_path / "big.csv", 'id,text\n1,"' + "x" * 10_000_000 + '"\n2,short\n')
    with pytest.warns(TableLoadWarning, match=r"1 cell\(s\) longer than 100000 chars truncated"):
        t = load_table(p)
    assert t.df["text"].str.len().tolist() == [100_000, 5]
    assert load_table(p, max_cell_chars=None).df["text"].str.len().tolist() == [10_000_000, 5]


def test_non_utf8_encodings_fall_back_with_warning(tmp_path: Path) -> None:
    latin = tmp_path / "latin.csv"
    latin.write_bytes("name,city\nJosé,São Paulo\nRené,Zürich\n".encode("latin-1"))
    with pytest.warns(TableLoadWarning, match="not valid UTF-8.*decoded as cp1252"):
        t = load_table(latin)
    assert t.df.values.tolist() == [["José", "São Paulo"], ["René", "Zürich"]]
    sjis = tmp_path / "sjis.csv"
    sjis.write_bytes(
        ("名前,都市\n" + "山田太郎,東京都新宿区\n鈴木花子,大阪府\n" * 20).encode("shift_jis")
    )
    with pytest.warns(TableLoadWarning, match="decoded as"):
        t = load_table(sjis)
    assert t.df.iloc[0].tolist() == ["山田太郎", "東京都新宿区"]
    assert load_table(latin, encoding="latin-1").df.iloc[0, 1] == "São Paulo"
    with pytest.raises(TableLoadError, match="cannot decode as utf-8"):
        load_table(latin, encoding="utf-8")


def test_json_records_nested_lines_and_split(tmp_path: Path) -> None:
    p = _write(tmp_path / "r.json", json.dumps([{"a": 1, "b": {"x": 1}}, {"a": 2, "b": [1, 2]}]))
    with pytest.warns(TableLoadWarning, match="2 nested JSON value"):
        t = load_table(p)
    assert t.df.values.tolist() == [[1, '{"x": 1}'], [2, "[1, 2]"]]
    lines = load_table(_write(tmp_path / "r.jsonl", '{"a": 1}\n\n{"a": 2, "c": "z"}\n'))
    assert list(lines.df.columns) == ["a", "c"] and lines.df["a"].tolist() == [1, 2]
    with pytest.warns(TableLoadWarning, match="duplicate column name 'x' renamed to 'x_2'"):
        split = load_table(_write(tmp_path / "s.json", '{"columns": ["x", "x"], "data": [[1, 2]]}'))
    assert list(split.df.columns) == ["x", "x_2"]
    wrapped = load_table(_write(tmp_path / "w.json", '{"rows": [{"k": "v"}]}'))
    assert wrapped.df.to_dict("records") == [{"k": "v"}]
    columns = load_table(_write(tmp_path / "c.json", '{"a": [1, 2], "b": ["x", "y"]}'))
    assert columns.df.to_dict("list") == {"a": [1, 2], "b": ["x", "y"]}
    with pytest.raises(TableLoadError, match="JSON object is not a table"):
        load_table(_write(tmp_path / "o.json", '{"a": [1, 2], "b": [1]}'))
    with pytest.raises(TableLoadError, match="line 2 is not valid JSON"):
        load_table(_write(tmp_path / "bad.jsonl", '{"a": 1}\n{oops\n'))


def test_json_loader_does_not_sniff_ottqa_dicts(tmp_path: Path, test_data: Path) -> None:
    """OTT-QA dicts are a dataset format (load_ottqa_corpus), not a generic JSON table."""
    corpus = json.loads((test_data / "ottqa_sample.json").read_text(encoding="utf-8"))
    p = _write(tmp_path / "one.json", json.dumps(next(iter(corpus.values()))))
    with pytest.raises(TableLoadError, match="JSON object is not a table"):
        load_table(p, caption="My caption")
    records = _write(tmp_path / "r.json", '[{"header": "h", "data": 1}]')
    t = load_table(records, caption="My caption")
    assert t.caption == "My caption" and t.df.to_dict("records") == [{"header": "h", "data": 1}]


def test_sqlite_tables(tmp_path: Path) -> None:
    p = tmp_path / "x.sqlite"
    with sqlite3.connect(p) as conn:
        conn.execute("CREATE TABLE t1 (a INTEGER, b TEXT)")
        conn.execute("INSERT INTO t1 VALUES (1, 'x'), (2, 'y')")
        conn.execute('CREATE TABLE "we""ird; --" (z)')
        conn.execute('INSERT INTO "we""ird; --" VALUES (5)')
    conn.close()
    with pytest.raises(
        TableLoadError, match=r"has 2 tables, pass table=one of \['t1', 'we\"ird; --'\]"
    ):
        load_table(p)
    t = load_table(p, table="t1")
    assert t.df.to_dict("list") == {"a": [1, 2], "b": ["x", "y"]}
    assert t.metadata["table"] == "t1" and t.id == "x"
    assert load_table(p, table='we"ird; --').df["z"].tolist() == [5]
    with pytest.raises(TableLoadError, match="no table 'nope'"):
        load_table(p, table="nope")
    single = tmp_path / "one.db"
    with sqlite3.connect(single) as conn:
        conn.execute("CREATE TABLE only (v TEXT)")
        conn.execute("INSERT INTO only VALUES ('k')")
    conn.close()
    assert load_table(single).df["v"].tolist() == ["k"]


def test_duckdb_tables(tmp_path: Path) -> None:
    p = tmp_path / "y.duckdb"
    conn = duckdb.connect(str(p))
    conn.execute("CREATE TABLE q (a INTEGER, b VARCHAR)")
    conn.execute("INSERT INTO q VALUES (1, 'u'), (2, 'v')")
    conn.close()
    t = load_table(p)
    assert t.df.to_dict("list") == {"a": [1, 2], "b": ["u", "v"]}
    assert t.metadata["table"] == "q"
    conn = duckdb.connect(str(p))
    conn.execute("CREATE TABLE r (c INTEGER)")
    conn.close()
    with pytest.raises(TableLoadError, match=r"pass table=one of \['q', 'r'\]"):
        load_table(p)


def test_parquet_and_excel(tmp_path: Path) -> None:
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    frame.to_parquet(tmp_path / "p.parquet")
    assert load_table(tmp_path / "p.parquet").df.equals(frame)
    book = tmp_path / "e.xlsx"
    with pd.ExcelWriter(book) as writer:
        frame.to_excel(writer, sheet_name="S1", index=False)
        pd.DataFrame({"c": [7]}).to_excel(writer, sheet_name="S2", index=False)
    with pytest.raises(TableLoadError, match=r"has 2 sheets, pass sheet=one of \['S1', 'S2'\]"):
        load_table(book)
    t = load_table(book, sheet="S1")
    assert t.df.to_dict("list") == {"a": [1, 2], "b": ["x", "y"]}
    assert t.metadata["sheet"] == "S1"
    assert load_table(book, sheet=1).df["c"].tolist() == [7]
    with pytest.raises(TableLoadError, match="no sheet #5"):
        load_table(book, sheet=5)


def test_dataframe_input_is_copied_and_cleaned() -> None:
    frame = pd.DataFrame([[1, " a ", 3]], columns=["x", "x", float("nan")])
    with pytest.warns(TableLoadWarning) as record:
        t = load_table(frame, id="mem", caption="In memory")
    messages = " | ".join(str(w.message) for w in record)
    assert "duplicate column name 'x'" in messages and "replaced by 'column_3'" in messages
    assert list(t.df.columns) == ["x", "x_2", "column_3"]
    assert t.df.iloc[0].tolist() == [1, "a", 3]
    assert list(frame.columns)[:2] == ["x", "x"] and frame.iloc[0, 1] == " a "
    multi = pd.DataFrame([[1, 2]], columns=pd.MultiIndex.from_tuples([("g", "a"), ("g", "b")]))
    assert list(load_table(multi).df.columns) == ["g / a", "g / b"]
    with pytest.raises(TableLoadError, match="table has no rows"):
        load_table(pd.DataFrame({"a": []}))
    with pytest.raises(TableLoadError, match="table has no columns"):
        load_table(pd.DataFrame(index=[0, 1]))


def test_load_tables_folder_recursive_skips_bad(tmp_path: Path) -> None:
    _write(tmp_path / "a.csv", "x\n1\n")
    (tmp_path / "sub").mkdir()
    _write(tmp_path / "sub" / "b.tsv", "y\tz\n2\t3\n")
    _write(tmp_path / "sub" / "empty.csv", "")
    _write(tmp_path / "readme.md", "# not a table")
    with pytest.warns(TableLoadWarning, match="skipped .*empty.csv: file is empty"):
        tables = list(load_tables(tmp_path))
    assert [t.id for t in tables] == ["a", "sub/b"]
    assert tables[1].df.to_dict("list") == {"y": [2], "z": [3]}
    with pytest.raises(TableLoadError, match="file is empty"):
        list(load_tables(tmp_path, on_error="raise"))
    listed = list(load_tables([tmp_path / "a.csv", tmp_path / "sub" / "b.tsv", tmp_path / "a.csv"]))
    assert [t.id for t in listed] == ["a", "b", "a_2"]
    with pytest.raises(TableLoadError, match="no such file or folder"):
        list(load_tables(tmp_path / "missing"))
