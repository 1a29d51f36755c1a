"""Dataset-native table readers for the development data (WTQ, TabFact).

OTT-QA tables are JSON dicts: see :mod:`tablerag_agents.tables.ottqa`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tablerag_agents.tables.loaders import load_table
from tablerag_agents.tables.model import Table


def load_wtq_table(path: str | Path, *, quiet: bool = True, **kwargs: Any) -> Table:
    """Read a WikiTableQuestions CSV (comma-separated, quotes escaped with a backslash).

    The id is the path relative to the ``csv`` folder without the extension
    (``"200-csv/0"``) when the file sits in one, else the file stem; the
    caption defaults to the same (WTQ tables have no titles).
    """
    p = Path(path)
    parts = p.with_suffix("").parts
    table_id = "/".join(parts[-2:]) if len(parts) >= 2 and parts[-2].endswith("-csv") else p.stem
    kwargs.setdefault("id", table_id)
    kwargs.setdefault("caption", table_id)
    return load_table(p, format="csv", sep=",", escapechar="\\", quiet=quiet, **kwargs)


def load_tabfact_table(
    path: str | Path, *, caption: str | None = None, quiet: bool = True, **kwargs: Any
) -> Table:
    """Read a TabFact table (``#``-separated); the caption lives in the examples JSON.

    Args:
        path: A file from ``tabfact/all_csv``; its name (``1-10236830-6.html.csv``)
            is the table id.
        caption: The table caption from ``val_examples.json``, if known.
        quiet: Log repairs instead of warning.
        **kwargs: Passed to :func:`~tablerag_agents.tables.loaders.load_table`.
    """
    p = Path(path)
    kwargs.setdefault("id", p.name)
    return load_table(p, format="csv", sep="#", caption=caption or p.name, quiet=quiet, **kwargs)
