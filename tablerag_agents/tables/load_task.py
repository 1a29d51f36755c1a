"""The bounded worker's ``load`` task: read one table file, send it back as Arrow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tablerag_agents.bounded.frames import encode_frame
from tablerag_agents.bounded.limits import MIB
from tablerag_agents.errors import TableLimitError
from tablerag_agents.tables.limits import LoadLimits
from tablerag_agents.tables.reading import read_file


def run(args: dict[str, Any], blob: bytes) -> tuple[dict[str, Any], bytes]:
    """Read ``args["path"]`` with :func:`~tablerag_agents.tables.reading.read_file`.

    Returns:
        ``{"notes", "metadata", "tagged"}`` and the clean frame as an Arrow IPC
        stream (:func:`~tablerag_agents.bounded.frames.encode_frame`).

    Raises:
        TableLoadError: For any unreadable, unusable or too large file.
    """
    path = Path(args["path"])
    limits = LoadLimits.model_validate(args["limits"])
    df, notes, metadata = read_file(
        path,
        format=args.get("format"),
        table=args.get("table"),
        sheet=args.get("sheet"),
        block=args.get("block"),
        encoding=args.get("encoding"),
        max_cell_chars=args.get("max_cell_chars"),
        iso_dates=bool(args.get("iso_dates", True)),
        limits=limits,
        opts=args.get("opts") or {},
    )
    data, tagged = encode_frame(df)
    del df
    if len(data) > limits.max_result_mb * MIB:
        raise TableLimitError(
            path,
            "result size",
            f"{limits.max_result_mb} MB",
            f"the table is {len(data) // MIB} MB as Arrow",
        )
    return {"notes": notes, "metadata": metadata, "tagged": tagged}, data
