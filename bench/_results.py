"""Where a bench script saves its result: never over a result already saved (bench helper).

A default output that already exists (a committed result, or an earlier run) is
kept: the new result goes beside it under a timestamped name. An explicit
``--out`` that exists is refused unless ``--force`` is given.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def add_output_args(parser: argparse.ArgumentParser, default: Path) -> None:
    """Add ``--out`` (default: ``default``, or a timestamped name beside it) and ``--force``."""
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"result file (default: {default.name} in {default.parent.name}/, or a "
        "timestamped name beside it when that file exists; an existing --out needs --force)",
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing result file")


def result_path(default: Path, out: Path | None = None, *, force: bool = False) -> Path:
    """The file to write: ``out``, else ``default`` or a timestamped name beside it.

    Raises:
        SystemExit: ``out`` exists and ``force`` is not set.
    """
    if out is not None:
        if out.exists() and not force:
            raise SystemExit(f"{out} exists; pass --force to overwrite it, or another --out")
        return out
    if force or not default.exists():
        return default
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return default.with_name(f"{default.stem}-{stamp}{default.suffix}")


def save_json(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON (the folder is created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
