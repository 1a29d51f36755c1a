"""A chart drawn in the sandbox: the cell that renders it there, the host's checks, the record.

Model code draws with matplotlib (the Agg backend: no display) inside the
sandbox; :func:`capture_cell` then renders the open figure to PNG there and
returns it base64-encoded as the cell's value, through the sandbox's ordinary
JSON result channel. Everything that comes back is untrusted: :func:`read_capture`
checks the size of the text before decoding it, the PNG signature, and the
pixel size in its header, against :class:`ChartLimits`.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import math
import struct
from dataclasses import dataclass
from typing import Any

import pandas as pd
from pydantic import BaseModel, Field

from tablerag_agents.errors import ChartError

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_TITLE_CHARS = 200
MAX_CELL_CHARS = 200

CellValue = str | int | float | bool | None


@dataclass(frozen=True)
class ChartLimits:
    """Bounds on a chart returned from the sandbox.

    Attributes:
        max_png_bytes: Largest PNG returned (the answer, the state and the API carry it).
        max_pixels: Largest width x height; a bigger figure is refused before rendering.
        dpi: Resolution the figure is rendered at (a 8 x 5 in figure gives 800 x 500 px).
        max_data_rows: Rows of the chart's data kept beside it.
        max_data_columns: Columns of the chart's data kept beside it.
    """

    max_png_bytes: int = 1024 * 1024
    max_pixels: int = 4_000_000
    dpi: int = 100
    max_data_rows: int = 200
    max_data_columns: int = 20

    def __post_init__(self) -> None:
        """Refuse limits that cannot be met."""
        for name in ("max_png_bytes", "max_pixels", "dpi", "max_data_rows", "max_data_columns"):
            if getattr(self, name) < 1:
                raise ValueError(f"ChartLimits.{name} must be >= 1, got {getattr(self, name)}")


class ChartData(BaseModel):
    """The data a chart plots: a small table."""

    columns: list[str] = Field(default_factory=list)
    rows: list[list[CellValue]] = Field(default_factory=list)
    """At most ``ChartLimits.max_data_rows`` rows, one value per column."""
    n_rows: int = 0
    """Rows the code returned (``rows`` may hold fewer)."""
    truncated: bool = False


class Chart(BaseModel):
    """A chart answer: the PNG, its size, its title and the data behind it."""

    png_base64: str
    """The PNG image, base64-encoded (checked: a PNG within the limits)."""
    width: int
    """Pixels, from the PNG header."""
    height: int
    title: str = ""
    """The figure's title (its suptitle or first axes title), if it has one."""
    data: ChartData | None = None
    """The table the code plotted (None: the code returned none)."""
    code: str = ""
    """The code that drew it."""
    notes: list[str] = Field(default_factory=list)
    """Remarks: several figures (the last one is returned), no data returned..."""

    def png_bytes(self) -> bytes:
        """The PNG image."""
        return base64.b64decode(self.png_base64)


_CAPTURE = """
def _tablerag_chart(max_bytes, max_pixels, dpi):
    import sys
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return None
    import base64, io
    import matplotlib
    from matplotlib import _pylab_helpers
    managers = _pylab_helpers.Gcf.get_all_fig_managers()
    if not managers:
        return None
    fig = (_pylab_helpers.Gcf.get_active() or managers[-1]).canvas.figure
    width, height = (float(v) * dpi for v in fig.get_size_inches())
    try:
        if width * height > max_pixels:
            return {{"error": f"the chart would be {{width:.0f}} x {{height:.0f}} pixels at "
                     f"{{dpi}} dpi, over the limit of {{max_pixels}} pixels; use a smaller "
                     "figsize such as (8, 5)"}}
        buffer = io.BytesIO()
        with matplotlib.rc_context({{"savefig.bbox": "standard"}}):
            fig.savefig(buffer, format="png", dpi=dpi)
        png = buffer.getvalue()
    finally:
        _pylab_helpers.Gcf.destroy_all()
    if len(png) > max_bytes:
        return {{"error": f"the chart PNG is {{len(png)}} bytes, over the limit of "
                 f"{{max_bytes}} bytes; draw fewer points or a smaller figure"}}
    suptitle = fig.get_suptitle() if hasattr(fig, "get_suptitle") else ""
    titles = [suptitle] + [ax.get_title() for ax in fig.axes]
    title = next((t for t in titles if t and t.strip()), "")
    encoded = base64.b64encode(png).decode("ascii")
    return {{"png": encoded, "figures": len(managers), "title": title}}


_tablerag_chart({max_bytes}, {max_pixels}, {dpi})
"""


def capture_cell(limits: ChartLimits) -> str:
    """The sandbox cell that renders the open figure to a PNG (None when there is none).

    Its value is ``{"png": base64, "figures": n, "title": str}``, or ``{"error": why}``
    when the figure goes past ``limits`` (a too large figure is never rendered).
    Every figure is closed afterwards. It defines only a ``_``-prefixed name.
    """
    return _CAPTURE.format(
        max_bytes=int(limits.max_png_bytes), max_pixels=int(limits.max_pixels), dpi=limits.dpi
    )


@dataclass(frozen=True)
class Captured:
    """A checked PNG from the sandbox."""

    png: bytes
    width: int
    height: int
    title: str
    figures: int


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height from a PNG's header.

    Raises:
        ChartError: The bytes are not a PNG (signature, then an IHDR chunk).
    """
    if not png.startswith(PNG_SIGNATURE) or len(png) < 24 or png[12:16] != b"IHDR":
        raise ChartError("the chart is not a PNG image (bad signature or header)")
    width, height = struct.unpack(">II", png[16:24])
    if width == 0 or height == 0:
        raise ChartError(f"the chart PNG has an empty size ({width} x {height} pixels)")
    return width, height


def read_capture(value: Any, limits: ChartLimits) -> Captured:
    """Check what :func:`capture_cell` returned (untrusted) and decode the PNG.

    Raises:
        ChartError: No figure was open, the sandbox refused it (too large), or the
            value is not a PNG within ``limits`` (naming the limit and the value).
    """
    if value is None:
        raise ChartError(
            "the code drew no chart: no matplotlib figure was open when it ended "
            "(draw with matplotlib.pyplot, e.g. fig, ax = plt.subplots())"
        )
    if not isinstance(value, dict):
        raise ChartError(f"the chart came back as {type(value).__name__}, not a PNG")
    if "error" in value:
        raise ChartError(str(value["error"])[:500])
    text = value.get("png")
    if not isinstance(text, str):
        raise ChartError("the chart came back without a PNG")
    if len(text) > 4 * ((limits.max_png_bytes + 2) // 3):
        raise ChartError(
            f"the chart PNG is about {len(text) * 3 // 4} bytes, over the limit of "
            f"{limits.max_png_bytes} bytes"
        )
    try:
        png = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ChartError(f"the chart PNG is not valid base64 ({exc})") from exc
    if len(png) > limits.max_png_bytes:
        raise ChartError(
            f"the chart PNG is {len(png)} bytes, over the limit of {limits.max_png_bytes} bytes"
        )
    width, height = png_size(png)
    if width * height > limits.max_pixels:
        raise ChartError(
            f"the chart is {width} x {height} pixels, over the limit of {limits.max_pixels} pixels"
        )
    title = value.get("title")
    figures = value.get("figures")
    return Captured(
        png=png,
        width=width,
        height=height,
        title=" ".join(title.split())[:MAX_TITLE_CHARS] if isinstance(title, str) else "",
        figures=figures if isinstance(figures, int) and figures > 0 else 1,
    )


def _cell(value: Any) -> CellValue:
    """A JSON scalar for one data cell (NaN and missing values become None)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, bool):
        return value
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()  # numpy scalars
    if isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    return str(value)[:MAX_CELL_CHARS]


def chart_data(value: Any, limits: ChartLimits) -> ChartData | None:
    """The data table a chart's code returned (a DataFrame, Series, dict or list), bounded.

    A named or non-integer index (a groupby key) becomes a column; an unnamed
    integer index (row positions) is left out. None when the value is no table.
    """
    if isinstance(value, pd.Series):
        value = value.to_frame(name=str(value.name) if value.name is not None else "value")
    elif isinstance(value, dict) and value:
        try:
            value = pd.DataFrame(value)
        except ValueError:
            value = pd.Series(value).to_frame("value")
    elif isinstance(value, list) and value:
        value = pd.DataFrame(value)
    if not isinstance(value, pd.DataFrame) or value.shape[1] == 0:
        return None
    frame = value
    index = frame.index
    # A named or non-integer index is data (a groupby key); row positions are not.
    if any(n is not None for n in index.names) or not pd.api.types.is_integer_dtype(index):
        frame = frame.reset_index(allow_duplicates=True)
    frame = frame.iloc[: limits.max_data_rows, : limits.max_data_columns]
    columns = [str(c)[:MAX_CELL_CHARS] for c in frame.columns]
    rows = [[_cell(v) for v in row] for row in frame.itertuples(index=False, name=None)]
    return ChartData(
        columns=columns,
        rows=rows,
        n_rows=len(value),
        truncated=len(value) > len(rows) or value.shape[1] > len(columns),
    )
