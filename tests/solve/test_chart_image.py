"""The host's checks of a chart coming back from the sandbox (untrusted), its data table, and
the error when matplotlib is missing (no sandbox needed)."""

from __future__ import annotations

import base64
import io
import struct
import zlib

import numpy as np
import pandas as pd
import pytest
from fakes import ScriptedChatModel
from PIL import Image

from tablerag_agents.errors import ChartError
from tablerag_agents.sandbox import ExecResult
from tablerag_agents.solve.chart import ChartSolver
from tablerag_agents.solve.chart_image import (
    ChartLimits,
    chart_data,
    png_size,
    read_capture,
)


def png(width: int = 40, height: int = 30) -> bytes:
    """A real PNG made by Pillow."""
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(buffer, format="PNG")
    return buffer.getvalue()


def forged_png(width: int, height: int) -> bytes:
    """A tiny file whose header claims ``width`` x ``height`` pixels."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr
    return b"\x89PNG\r\n\x1a\n" + chunk + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))


def capture(data: bytes, **extra: object) -> dict[str, object]:
    return {"png": base64.b64encode(data).decode(), "figures": 1, "title": "T", **extra}


def test_a_real_png_is_read_with_its_size_and_title() -> None:
    shot = read_capture(capture(png(), title="  Sales\n by month "), ChartLimits())
    assert (shot.width, shot.height) == (40, 30)
    assert shot.png == png() and shot.title == "Sales by month" and shot.figures == 1
    assert Image.open(io.BytesIO(shot.png)).size == (40, 30)


def test_no_figure_is_a_clear_error() -> None:
    with pytest.raises(ChartError, match="drew no chart: no matplotlib figure"):
        read_capture(None, ChartLimits())


def test_a_refusal_from_the_sandbox_keeps_its_words() -> None:
    why = "the chart would be 20000 x 20000 pixels at 100 dpi, over the limit of 4000000 pixels"
    with pytest.raises(ChartError, match="over the limit of 4000000 pixels"):
        read_capture({"error": why}, ChartLimits())


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([1, 2], "came back as list"),
        ({"png": 5}, "without a PNG"),
        ({"png": "not base64!"}, "not valid base64"),
        (capture(b"GIF89a" + b"\x00" * 40), "not a PNG"),
        (capture(forged_png(0, 10)), "empty size"),
    ],
)
def test_forged_values_are_refused(value: object, message: str) -> None:
    with pytest.raises(ChartError, match=message):
        read_capture(value, ChartLimits())


def test_an_oversized_png_is_refused_before_decoding() -> None:
    limits = ChartLimits(max_png_bytes=1000)
    with pytest.raises(ChartError, match="over the limit of 1000 bytes"):
        read_capture({"png": "A" * 10_000_000}, limits)
    with pytest.raises(ChartError, match="over the limit of 1000 bytes"):
        read_capture(capture(png(2000, 2000)), limits)


def test_a_header_claiming_too_many_pixels_is_refused() -> None:
    with pytest.raises(ChartError, match="100000 x 100000 pixels, over the limit of 4000000"):
        read_capture(capture(forged_png(100_000, 100_000)), ChartLimits())
    assert png_size(forged_png(7, 9)) == (7, 9)


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="dpi must be >= 1"):
        ChartLimits(dpi=0)


def test_chart_data_keeps_a_groupby_key_and_json_values() -> None:
    series = pd.Series([np.int64(3), np.nan], index=pd.Index(["a", "b"], name="team"), name="n")
    data = chart_data(series, ChartLimits())
    assert data is not None
    assert data.columns == ["team", "n"] and data.rows == [["a", 3.0], ["b", None]]
    frame = pd.DataFrame({"x": range(300), "when": pd.Timestamp("2020-01-02")})
    data = chart_data(frame, ChartLimits(max_data_rows=5))
    assert data is not None and data.n_rows == 300 and data.truncated and len(data.rows) == 5
    assert data.rows[0] == [0, "2020-01-02T00:00:00"]
    assert chart_data({"y": [1, 2]}, ChartLimits()).rows == [[1], [2]]  # type: ignore[union-attr]
    assert chart_data(None, ChartLimits()) is None and chart_data("text", ChartLimits()) is None


class _NoMatplotlib:
    """A sandbox stand-in whose interpreter lacks matplotlib (as without the charts extra)."""

    def session(self, tables: object) -> _NoMatplotlib:
        return self

    def __enter__(self) -> _NoMatplotlib:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def run(self, code: str, timeout: float | None = None) -> ExecResult:
        error = "ModuleNotFoundError: No module named 'matplotlib'"
        return ExecResult(False, error=error, error_type="ModuleNotFoundError")


def test_missing_matplotlib_names_the_extra_and_asks_no_repair() -> None:
    reply = "```python\ndef make_chart(df):\n    return df\n```"
    model = ScriptedChatModel([reply])  # a repair call would run out of replies
    solver = ChartSolver(model, _NoMatplotlib())  # type: ignore[arg-type]
    result = solver.solve("plot a by b", pd.DataFrame({"a": [1], "b": [2]}))
    assert not result.ok and result.error == (
        "the chart could not be drawn: matplotlib is not installed where the sandbox runs "
        "Python; install it in the same environment (pip install 'tablerag-agents[charts]')"
    )
    assert len(model.prompts) == 1
