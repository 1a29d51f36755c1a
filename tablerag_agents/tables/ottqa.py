"""OTT-QA table dicts to :class:`Table` (cell text kept as given, links kept aside).

An OTT-QA table is ``{uid, url, title, section_title, section_text, intro,
header: [[text, [links]]...], data: [[[text, [links]]...]...]}``. Cells stay
the upstream (tokenized) strings; hyperlinks go to ``metadata["links"]`` as
``[row, col, [links]]`` triples (only cells that have links) and
``metadata["header_links"]`` as ``[col, [links]]`` pairs, so the metadata stays
cheap and JSON-serialisable.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from tablerag_agents.errors import TableLoadError
from tablerag_agents.tables.cleaning import normalize_column_names, warn
from tablerag_agents.tables.model import Table

logger = logging.getLogger(__name__)

_TEXT_FIELDS = ("url", "section_title", "section_text", "intro")


def _cell(value: Any) -> tuple[str, list[str]]:
    """Split one ``[text, [links]]`` cell; a bare string is a cell without links."""
    if isinstance(value, str):
        return value, []
    if isinstance(value, Sequence) and len(value) == 2 and isinstance(value[0], str):
        links = value[1] if isinstance(value[1], list) else []
        return value[0], [str(link) for link in links]
    raise ValueError(f"cell is not [text, [links]]: {value!r:.80}")


def ottqa_table(d: dict[str, Any], *, table_id: str | None = None) -> Table:
    """Convert one OTT-QA table dict into a :class:`Table`.

    Rows shorter than the header are padded with ``""`` and longer rows are cut
    (both logged); empty or duplicate header names are repaired as in
    :func:`~tablerag_agents.tables.cleaning.normalize_column_names`.

    Args:
        d: The table dict.
        table_id: Id to use when ``d`` has no ``uid`` (e.g. the corpus key).

    Returns:
        The table; ``caption`` is the page title and ``metadata`` holds
        ``uid, url, section_title, section_text, intro, links, header_links``.

    Raises:
        TableLoadError: If the dict lacks a header or rows, or cells are malformed.
    """
    uid = str(d.get("uid") or table_id or "")
    source = f"ottqa:{uid or '?'}"
    if not uid:
        raise TableLoadError(source, "OTT-QA table has no 'uid' and no table_id was given")
    header, rows = d.get("header"), d.get("data")
    if not isinstance(header, list) or not header:
        raise TableLoadError(source, "OTT-QA table has no header")
    if not isinstance(rows, list) or not rows:
        raise TableLoadError(source, "table has no rows")
    try:
        head = [_cell(h) for h in header]
        width = len(head)
        cells: list[list[str]] = []
        links: list[list[Any]] = []
        ragged = 0
        for r, row in enumerate(rows):
            parsed = [_cell(c) for c in row]
            if len(parsed) != width:
                ragged += 1
                parsed = (parsed + [("", [])] * width)[:width]
            cells.append([text for text, _ in parsed])
            links.extend([r, c, ls] for c, (_, ls) in enumerate(parsed) if ls)
    except (TypeError, ValueError) as exc:
        raise TableLoadError(source, str(exc)) from exc
    if ragged:
        logger.info("%s: %d row(s) padded/cut to the header width %d", source, ragged, width)
    names, notes = normalize_column_names([text for text, _ in head])
    for note in notes:
        logger.debug("%s: %s", source, note)
    metadata: dict[str, Any] = {"uid": uid, "source": source}
    for key in _TEXT_FIELDS:
        if isinstance(d.get(key), str):
            metadata[key] = d[key]
    metadata["links"] = links
    metadata["header_links"] = [[c, hl] for c, (_, hl) in enumerate(head) if hl]
    df = pd.DataFrame(cells, columns=names, dtype=object)
    return Table(id=uid, df=df, caption=str(d.get("title") or uid), metadata=metadata)


def read_ottqa_items(path: Path) -> list[tuple[str | None, Any]]:
    """The ``(key, entry)`` pairs of an OTT-QA ``tables.json``: a JSON object
    ``{table_id: table}`` (keys are ids) or a list of tables (keys are None).

    Raises:
        TableLoadError: If the file is missing or is not such a JSON.
    """
    if not path.is_file():
        raise TableLoadError(path, "no such file" if not path.exists() else "not a file")
    try:
        with path.open(encoding="utf-8") as fh:
            raw = json.load(fh)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TableLoadError(path, f"not valid JSON: {exc}") from exc
    if isinstance(raw, dict):
        return list(raw.items())
    if isinstance(raw, list):
        return [(None, t) for t in raw]
    raise TableLoadError(path, "expected a JSON object {table_id: table} or a list of tables")


def load_ottqa_corpus(path: str | Path, *, limit: int | None = None) -> list[Table]:
    """Read an OTT-QA ``tables.json`` (``{table_id: table}``) into tables.

    Tables that cannot be converted (no header, no rows, malformed cells) are
    skipped and counted in one :class:`TableLoadWarning`.

    Args:
        path: The JSON file (a dict keyed by table id, or a list of table dicts).
        limit: Stop after this many tables (for quick experiments).

    Raises:
        TableLoadError: If the file is missing or is not an OTT-QA table JSON.
    """
    p = Path(path)
    items = read_ottqa_items(p)
    tables: list[Table] = []
    skipped: list[str] = []
    for key, value in items:
        if limit is not None and len(tables) >= limit:
            break
        if not isinstance(value, dict):
            skipped.append(f"{key}: not an object")
            continue
        try:
            tables.append(ottqa_table(value, table_id=key))
        except TableLoadError as exc:
            skipped.append(f"{key}: {exc.reason}")
    if skipped:
        warn(f"{p}: skipped {len(skipped)} table(s), e.g. {skipped[:3]}")
    for table in tables:
        table.metadata["source"] = str(p)
    logger.info("loaded %d OTT-QA tables from %s", len(tables), p)
    return tables
