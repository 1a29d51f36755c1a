"""Small hostile table files (a few KB to a few MB) that cost GBs or forever to load.

Used by the hostile-input tests and by ``bench/hostile_inputs.py``; sizes are
parameters so tests stay cheap. Each builder writes one file and returns its path.
"""

from __future__ import annotations

import io
import sqlite3
import struct
import zipfile
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq


def parquet_dictionary_bomb(path: Path, rows: int = 4000, cell_mb: int = 1) -> Path:
    """One ``cell_mb`` MB string in the dictionary, referenced by every row (~0.5 KB file)."""
    value = "x" * (cell_mb << 20)
    column = pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()), pa.array([value]))
    pq.write_table(
        pa.table({"s": column}),
        path,
        compression="zstd",
        compression_level=19,
        store_schema=False,  # read back dense, as a reader that ignores the Arrow schema would
    )
    return path


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def parquet_row_count_lie(path: Path, claimed_rows: int = 10**12) -> Path:
    """A 3-row Parquet file whose footer claims ``claimed_rows`` rows.

    The footer is Thrift compact: the i64 fields ``FileMetaData.num_rows``,
    ``RowGroup.num_rows`` and ``ColumnMetaData.num_values`` each follow a field
    header byte ``0x16`` (delta 1, type i64) and hold the zigzag varint of 3.
    """
    buffer = io.BytesIO()
    pq.write_table(pa.table({"n": pa.array([1, 2, 3], pa.int64())}), buffer, compression="none")
    data = buffer.getvalue()
    footer_len = struct.unpack("<I", data[-8:-4])[0]
    footer = data[-8 - footer_len : -8]
    patched = footer.replace(b"\x16" + _varint(3 * 2), b"\x16" + _varint(claimed_rows * 2))
    if patched == footer:
        raise RuntimeError("row count not found in the Parquet footer")
    body = data[: -8 - footer_len]
    path.write_bytes(body + patched + struct.pack("<I", len(patched)) + b"PAR1")
    return path


def duckdb_with_view(path: Path, view_sql: str, macro: str | None = None) -> Path:
    """A DuckDB file whose only relation is the view ``t`` (and an optional macro)."""
    conn = duckdb.connect(str(path))
    if macro:
        conn.execute(macro)
    conn.execute(f"CREATE VIEW t AS {view_sql}")
    conn.close()
    return path


def sqlite_with_view(path: Path, view_sql: str) -> Path:
    """A SQLite file whose only relation is the view ``t``."""
    conn = sqlite3.connect(path)
    conn.execute(f"CREATE VIEW t AS {view_sql}")
    conn.commit()
    conn.close()
    return path


#: Views that cost unbounded memory or time when read.
DUCKDB_CROSS_JOIN = "SELECT a.range AS a, b.range AS b FROM range(100000) a, range(100000) b"
DUCKDB_REPEAT_BOMB = "SELECT repeat('x', 100000000) AS s FROM range(1000)"
DUCKDB_ENDLESS_CTE = (
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) AS m FROM r"
)
SQLITE_ZEROBLOB_BOMB = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 1000) "
    "SELECT zeroblob(100000000) AS b FROM c"
)
SQLITE_ENDLESS_CTE = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) AS m FROM c"
)


def xlsx_zip_bomb(path: Path, sheet_mb: int = 100) -> Path:
    """A workbook whose sheet XML is ``sheet_mb`` MB of numeric cells (deflated ~1000x).

    Rows and cells carry no ``r`` attribute (it is optional), so every MB is the same
    block and compresses to almost nothing.
    """
    row = "<row>" + "<c><v>1</v></c>" * 10 + "</row>"
    block = (row * ((1 << 20) // len(row))).encode()
    buffer = io.BytesIO()
    pd.DataFrame({"a": [1]}).to_excel(buffer, index=False, engine="openpyxl")
    with zipfile.ZipFile(buffer) as source, zipfile.ZipFile(path, "w") as out:
        for info in source.infolist():
            if info.filename != "xl/worksheets/sheet1.xml":
                out.writestr(info, source.read(info))
        info = zipfile.ZipInfo("xl/worksheets/sheet1.xml", date_time=(2024, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        with out.open(info, "w", force_zip64=True) as sheet:
            sheet.write(
                b'<?xml version="1.0" encoding="UTF-8"?><worksheet '
                b'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
                + row.replace("<v>1</v>", "<v>0</v>").encode()
            )
            for _ in range(sheet_mb):
                sheet.write(block)
            sheet.write(b"</sheetData></worksheet>")
    return path


def malformed_workbook(path: Path) -> Path:
    """A valid workbook whose ``xl/workbook.xml`` is cut in the middle of a tag."""
    buffer = io.BytesIO()
    pd.DataFrame({"a": [1, 2]}).to_excel(buffer, index=False, engine="openpyxl")
    with zipfile.ZipFile(buffer) as source, zipfile.ZipFile(path, "w") as out:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "xl/workbook.xml":
                data = data[: len(data) // 2]
            out.writestr(info, data)
    return path


def csv_huge_header(path: Path, header_mb: int = 20) -> Path:
    """A CSV whose header line is ``header_mb`` MB of ``a,a,a...``, then one row."""
    with path.open("wb") as fh:
        fh.write(b"a," * ((header_mb << 20) // 2) + b"a\n1,2\n")
    return path


def deep_json(path: Path, depth: int = 100_000) -> Path:
    """A JSON array nested ``depth`` levels deep."""
    path.write_text("[" * depth + "]" * depth)
    return path


def csv_nul_after_sample(path: Path, offset_kb: int = 70) -> Path:
    """A valid CSV with one NUL byte in a cell past the first ``offset_kb`` KB."""
    filler = "".join(f"{i},row {i}\n" for i in range((offset_kb << 10) // 12))
    path.write_bytes(b"n,name\n" + filler.encode() + b"999,ab\x00cd\n")
    return path
