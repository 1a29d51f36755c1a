"""Convert tables and result values to plain data and back (never pickle).

DataFrames and Series travel as Arrow IPC streams; scalars, lists and dicts as
JSON. Anything else is reported by its text repr only. Used on both sides of
the sandbox boundary, so it imports nothing from ``tablerag_agents``.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import json
import math
import struct
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

MAX_JSON_DEPTH = 40
MAX_JSON_ITEMS = 200_000


class NotData(Exception):
    """The value cannot be represented as plain JSON data."""


def frame_to_ipc(df: pd.DataFrame) -> bytes:
    """Serialise a DataFrame to Arrow IPC stream bytes (index kept in pandas metadata)."""
    table = pa.Table.from_pandas(df, preserve_index=None)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def ipc_to_frame(
    data: bytes | bytearray | memoryview, max_cells: int | None = None
) -> pd.DataFrame:
    """Parse and fully validate Arrow IPC stream bytes, then convert to pandas.

    Args:
        data: An Arrow IPC stream.
        max_cells: Refuse frames with more rows x columns than this (their pandas
            form could be far larger than ``data``: null or run-end columns).

    Raises:
        ValueError: Compressed bodies (a decompression bomb could exhaust memory),
            too many cells, or invalid data.
    """
    buffer = pa.py_buffer(data)
    for message in pa.ipc.MessageReader.open_stream(buffer):
        if message.type in ("record batch", "dictionary batch"):
            if _body_is_compressed(message.metadata.to_pybytes()):
                raise ValueError("compressed Arrow IPC bodies are not accepted")
    with pa.ipc.open_stream(buffer) as reader:
        table = reader.read_all()
    cells = table.num_rows * max(table.num_columns, 1)
    if max_cells is not None and cells > max_cells:
        raise ValueError(f"frame of {cells} cells exceeds the limit of {max_cells}")
    table.validate(full=True)
    return table.to_pandas(use_threads=False)


def _fb_field(buf: bytes, table: int, index: int) -> int | None:
    """Absolute position of field ``index`` of the flatbuffer table at ``table``."""
    vtable = table - struct.unpack_from("<i", buf, table)[0]
    slot = 4 + 2 * index
    if slot >= struct.unpack_from("<H", buf, vtable)[0]:
        return None
    offset = struct.unpack_from("<H", buf, vtable + slot)[0]
    return table + offset if offset else None


def _fb_deref(buf: bytes, pos: int) -> int:
    return pos + struct.unpack_from("<I", buf, pos)[0]


def _body_is_compressed(metadata: bytes) -> bool:
    """Whether an IPC message's RecordBatch declares body compression (Arrow Message.fbs)."""
    try:
        root = _fb_deref(metadata, 0)
        kind_pos, header_pos = _fb_field(metadata, root, 1), _fb_field(metadata, root, 2)
        if kind_pos is None or header_pos is None:
            return False
        kind, batch = metadata[kind_pos], _fb_deref(metadata, header_pos)
        if kind == 2:  # DictionaryBatch: its field 1 is the RecordBatch
            data_pos = _fb_field(metadata, batch, 1)
            if data_pos is None:
                return False
            batch, kind = _fb_deref(metadata, data_pos), 3
        return kind == 3 and _fb_field(metadata, batch, 3) is not None
    except (struct.error, IndexError) as exc:
        raise ValueError(f"malformed Arrow message metadata: {exc}") from exc


def arrow_safe(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Return a copy of ``df`` that Arrow can encode, plus notes on what changed.

    Mixed-type column names become strings; object columns holding values
    Arrow cannot type (mixed ints and strings, arbitrary objects) become strings
    with missing values kept missing.
    """
    notes: list[str] = []
    if not df.columns.is_unique:
        dupes = sorted({str(c) for c in df.columns[df.columns.duplicated()]})
        raise ValueError(f"duplicate column names cannot be transferred: {dupes}")
    names = list(df.columns)
    if len({type(c) for c in names}) > 1:
        df = df.set_axis([str(c) for c in names], axis=1)
        notes.append("column names of mixed types were converted to str")
    fixed: dict[Any, pd.Series] = {}
    for col in df.columns:
        if df[col].dtype != object:
            continue
        try:
            pa.array(df[col], from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            fixed[col] = df[col].map(lambda v: v if _is_missing(v) else str(v)).astype(object)
    if fixed:
        df = df.copy()
        for col, values in fixed.items():
            df[col] = values
        notes.append(f"columns {sorted(map(str, fixed))} had mixed values; converted to str")
    return df, notes


def _is_missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def encode_tables(tables: Mapping[str, pd.DataFrame]) -> tuple[list[dict[str, Any]], bytes]:
    """Encode named tables as one blob; returns per-table entries and the blob."""
    entries: list[dict[str, Any]] = []
    parts: list[bytes] = []
    for name, df in tables.items():
        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"table {name!r} must be a pandas DataFrame, got {type(df).__name__}")
        safe, notes = arrow_safe(df)
        data = frame_to_ipc(safe)
        entries.append({"name": name, "size": len(data), "notes": notes})
        parts.append(data)
    return entries, b"".join(parts)


def decode_tables(
    entries: list[dict[str, Any]], blob: bytes | bytearray
) -> dict[str, pd.DataFrame]:
    """Inverse of :func:`encode_tables` (slices the blob without copying it)."""
    tables: dict[str, pd.DataFrame] = {}
    view = memoryview(blob)
    offset = 0
    for entry in entries:
        size = int(entry["size"])
        tables[str(entry["name"])] = ipc_to_frame(view[offset : offset + size])
        offset += size
    if offset != len(blob):
        raise ValueError("table blob size does not match its entries")
    return tables


def to_jsonable(value: Any, depth: int = 0, budget: list[int] | None = None) -> Any:
    """Convert ``value`` to JSON-compatible Python data or raise :class:`NotData`."""
    budget = budget if budget is not None else [MAX_JSON_ITEMS]
    budget[0] -= 1
    if depth > MAX_JSON_DEPTH or budget[0] < 0:
        raise NotData("value is too deep or too large for JSON")
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, np.generic):
        if isinstance(value, np.datetime64 | np.timedelta64):
            return None if pd.isna(value) else str(pd.Timestamp(value).isoformat())
        return to_jsonable(value.item(), depth + 1, budget)
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, _dt.datetime | _dt.date | _dt.time):
        return value.isoformat()
    if isinstance(value, _dt.timedelta | pd.Timedelta):
        return str(value)
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, np.ndarray | pd.Index | pd.api.extensions.ExtensionArray):
        # ExtensionArray: e.g. what Series.unique() gives for string columns.
        return [to_jsonable(v, depth + 1, budget) for v in value.tolist()]
    if isinstance(value, list | tuple):
        return [to_jsonable(v, depth + 1, budget) for v in value]
    if isinstance(value, set | frozenset):
        items = [to_jsonable(v, depth + 1, budget) for v in value]
        return sorted(items, key=repr)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str | int | float | bool) and key is not None:
                raise NotData(f"dict key of type {type(key).__name__}")
            out[str(key) if not isinstance(key, str) else key] = to_jsonable(
                item, depth + 1, budget
            )
        return out
    raise NotData(f"values of type {type(value).__name__} are not plain data")


def short_repr(value: Any, max_chars: int) -> str:
    """Return ``repr(value)`` cut to ``max_chars`` with a note on what was cut."""
    text = repr(value)
    if len(text) <= max_chars:
        return text
    return text[:max_chars] + f"\n... [truncated: {len(text) - max_chars} more chars]"


def encode_value(value: Any, max_bytes: int, max_repr: int) -> tuple[dict[str, Any], bytes]:
    """Encode the value of a cell: metadata (with its repr) and an optional Arrow blob."""
    meta: dict[str, Any] = {"kind": "none", "type": type(value).__name__, "note": None}
    if value is None:
        meta["repr"] = ""
        return meta, b""
    meta["repr"] = short_repr(value, max_repr)
    if isinstance(value, pd.DataFrame | pd.Series):
        return _encode_pandas(value, meta, max_bytes)
    try:
        data = to_jsonable(value)
        size = len(json.dumps(data))
    except (NotData, ValueError, TypeError, RecursionError) as exc:
        meta.update(kind="opaque", note=f"not transferable as data ({exc}); repr only")
        return meta, b""
    if size > max_bytes:
        meta.update(kind="opaque", note=f"value too large ({size} bytes > {max_bytes}); repr only")
        return meta, b""
    meta.update(kind="json", json=data)
    return meta, b""


def _encode_pandas(
    value: pd.DataFrame | pd.Series, meta: dict[str, Any], max_bytes: int
) -> tuple[dict[str, Any], bytes]:
    if isinstance(value, pd.Series):
        name = value.name
        meta["name"] = name if name is None or isinstance(name, str | int | float) else str(name)
        frame = value.to_frame(name="value")
        meta["kind"] = "series"
    else:
        frame = value
        meta["kind"] = "frame"
    if int(frame.memory_usage(index=True, deep=False).sum()) > 4 * max_bytes:
        meta.update(kind="opaque", note=f"frame too large (> {max_bytes} bytes); repr only")
        return meta, b""
    try:
        safe, notes = arrow_safe(frame)
        blob = frame_to_ipc(safe)
    except (ValueError, TypeError, pa.ArrowException) as exc:
        meta.update(kind="opaque", note=f"not transferable as Arrow ({exc}); repr only")
        return meta, b""
    if len(blob) > max_bytes:
        meta.update(kind="opaque", note=f"frame too large ({len(blob)} > {max_bytes}); repr only")
        return meta, b""
    meta["note"] = "; ".join(notes) or None
    return meta, blob


def max_cells_for(blob: bytes) -> int:
    """Cell limit for a received frame: legit frames have at most ~2 cells per byte."""
    return 2 * len(blob) + 65_536


def decode_value(meta: dict[str, Any], blob: bytes) -> Any:
    """Rebuild the value encoded by :func:`encode_value` (None when only a repr came).

    Meant for untrusted input: frames are size-checked and validated.
    """
    kind = meta.get("kind")
    if kind == "json":
        return meta.get("json")
    if kind == "frame":
        return ipc_to_frame(blob, max_cells_for(blob))
    if kind == "series":
        frame = ipc_to_frame(blob, max_cells_for(blob))
        name = meta.get("name")
        return frame.iloc[:, 0].rename(name if isinstance(name, str | int | float) else None)
    return None
