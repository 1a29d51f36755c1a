"""Send a DataFrame across the worker boundary as Arrow IPC, object columns included.

Typed columns travel as Arrow (:func:`~tablerag_agents.sandbox.codec.frame_to_ipc`).
Object columns hold Python values Arrow cannot always type (a column mixing
ints and text, integers beyond 64 bits, bytes, lists): each such value travels
as a tagged string (``"i123"``, ``"sLake Tuz"``, ``"b<base64>"``, ``"j[1, 2]"``)
and is rebuilt as the same Python type (lists and dicts through JSON, their
dates as text), so the host gets what an in-process read would have
given. Nothing is pickled.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pandas as pd

from tablerag_agents.sandbox.codec import arrow_safe, frame_to_ipc, ipc_to_frame

_Encoder = tuple[type, str, Callable[[Any], str]]

#: (type, tag, encode); the first matching type wins (bool before int, Timestamp
#: before datetime before date).
_ENCODERS: tuple[_Encoder, ...] = (
    (bool, "?", lambda v: "1" if v else ""),
    (int, "i", str),
    (float, "f", repr),
    (str, "s", str),
    (bytes, "b", lambda v: base64.b64encode(v).decode("ascii")),
    (bytearray, "b", lambda v: base64.b64encode(bytes(v)).decode("ascii")),
    (Decimal, "d", str),
    (pd.Timestamp, "P", lambda v: v.isoformat()),
    (dt.datetime, "T", lambda v: v.isoformat()),
    (dt.date, "D", lambda v: v.isoformat()),
    (dt.time, "t", lambda v: v.isoformat()),
    (pd.Timedelta, "R", lambda v: str(v.value)),
    (dt.timedelta, "r", lambda v: f"{v.days},{v.seconds},{v.microseconds}"),
)

_DECODERS: dict[str, Callable[[str], Any]] = {
    "?": bool,
    "i": int,
    "f": float,
    "s": str,
    "b": lambda s: base64.b64decode(s.encode("ascii"), validate=True),
    "d": Decimal,
    "P": pd.Timestamp,
    "T": dt.datetime.fromisoformat,
    "D": dt.date.fromisoformat,
    "t": dt.time.fromisoformat,
    "R": lambda s: pd.Timedelta(int(s)),
    "r": lambda s: dt.timedelta(*(int(p) for p in s.split(","))),
    "j": json.loads,
    "A": lambda _: pd.NA,
    "N": lambda _: pd.NaT,
}


def _encode_value(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, list | dict):  # DuckDB LIST / STRUCT / MAP values
        try:
            return "j" + json.dumps(value, default=str, allow_nan=True)
        except (TypeError, ValueError):
            return "s" + str(value)
    if value is pd.NA:
        return "A"
    if value is pd.NaT:
        return "N"
    for kind, tag, encode in _ENCODERS:
        if isinstance(value, kind):
            return tag + encode(value)
    return "s" + str(value)  # anything else keeps its text, as in a CSV


def _decode_value(text: Any) -> Any:
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return None
    if not isinstance(text, str) or not text or text[0] not in _DECODERS:
        raise ValueError(f"malformed tagged cell {str(text)[:40]!r}")
    return _DECODERS[text[0]](text[1:])


def encode_frame(df: pd.DataFrame) -> tuple[bytes, list[str]]:
    """Encode ``df`` as Arrow IPC; returns the bytes and the names of tagged columns."""
    tagged: list[str] = []
    out = df
    for pos in range(df.shape[1]):
        if not pd.api.types.is_object_dtype(df.dtypes.iloc[pos]):
            continue
        if out is df:
            out = df.copy()
        out.isetitem(pos, pd.Series([_encode_value(v) for v in df.iloc[:, pos]], dtype=object))
        tagged.append(str(df.columns[pos]))
    safe, _ = arrow_safe(out)
    return frame_to_ipc(safe), tagged


def decode_frame(
    data: bytes | bytearray | memoryview, tagged: list[str], max_cells: int | None = None
) -> pd.DataFrame:
    """Inverse of :func:`encode_frame` (the Arrow stream is validated first).

    Raises:
        ValueError: Invalid Arrow data, too many cells, or a malformed tagged cell.
    """
    df = ipc_to_frame(data, max_cells)
    for name in tagged:
        if name not in df.columns:
            raise ValueError(f"no tagged column {name!r} in the frame")
        pos = df.columns.get_loc(name)
        if not isinstance(pos, int):
            raise ValueError(f"tagged column {name!r} is not unique")
        values = [_decode_value(v) for v in df.iloc[:, pos]]
        df.isetitem(pos, pd.Series(values, index=df.index, dtype=object))
    return df
