"""Searchable text fields of a table for corpus retrieval (title, headers, cells, linked pages)."""

from __future__ import annotations

import gzip
import json
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from tablerag_agents.tables.model import Table

logger = logging.getLogger(__name__)

#: Field names, in the order they are stored.
FIELDS = ("meta", "cells", "intro", "passages")

PassageLookup = Callable[[str], str | None]
"""Maps a hyperlink target (``/wiki/Page_title``) to the linked page's text, or None."""

_PLACEHOLDER_COLUMN = re.compile(r"^column_\d+$")


def link_key(link: str) -> str:
    """Normalise a Wikipedia link or URL to its page key (``Page_title``)."""
    key = link.split("/wiki/", 1)[1] if "/wiki/" in link else link
    return key.split("#", 1)[0].replace(" ", "_")


class LinkedPassages:
    """Offline texts of linked pages (e.g. Wikipedia intros), looked up by link.

    Call the instance with a link (``/wiki/Foo``, a full URL or ``Foo``) to get
    the page text or None.
    """

    def __init__(self, texts: Mapping[str, str]) -> None:
        """Wrap a mapping ``{page key: text}`` (keys as produced by :func:`link_key`)."""
        self._texts = dict(texts)

    def __len__(self) -> int:
        """Number of known pages."""
        return len(self._texts)

    def __call__(self, link: str) -> str | None:
        """Return the text of the linked page, or None when unknown."""
        return self._texts.get(link_key(link))

    @classmethod
    def from_jsonl(cls, path: str | Path) -> LinkedPassages:
        """Read ``{title, url, intro}`` lines (gzipped if the name ends in ``.gz``)."""
        p = Path(path)
        opener: Any = gzip.open if p.suffix == ".gz" else open
        texts: dict[str, str] = {}
        with opener(p, "rt", encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                rec = json.loads(line)
                key = link_key(rec.get("url") or rec.get("title", ""))
                texts[key] = rec.get("intro") or rec.get("text") or ""
        logger.info("loaded %d linked passages from %s", len(texts), p)
        return cls(texts)


def _header_text(table: Table) -> str:
    names = [str(c) for c in table.df.columns if not _PLACEHOLDER_COLUMN.match(str(c))]
    return " | ".join(names)


def table_links(table: Table) -> list[str]:
    """Return the distinct hyperlinks of a table's cells and header, in reading order.

    Reads ``metadata["links"]`` (``[row, col, [links]]`` triples, as written by
    the OTT-QA loader) and ``metadata["header_links"]`` (``[col, [links]]``).
    """
    seen: dict[str, None] = {}
    for entry in table.metadata.get("header_links", []) or []:
        for link in entry[-1]:
            seen.setdefault(str(link), None)
    for entry in table.metadata.get("links", []) or []:
        for link in entry[-1]:
            seen.setdefault(str(link), None)
    return list(seen)


def meta_text(table: Table) -> str:
    """Title, section title and column names: the short description every method uses."""
    parts = [table.caption, str(table.metadata.get("section_title", "") or ""), _header_text(table)]
    return " | ".join(p for p in parts if p)


def cells_text(table: Table) -> str:
    """All cell values, one line per row."""
    rows: Iterable[tuple[Any, ...]] = table.df.itertuples(index=False, name=None)
    return "\n".join(" | ".join("" if v is None else str(v) for v in row) for row in rows)


def row_texts(table: Table, *, max_chars: int = 512) -> list[str]:
    """One text per row: title, section title and ``column: value`` pairs, cut to ``max_chars``."""
    prefix = " | ".join(
        p for p in (table.caption, str(table.metadata.get("section_title", "") or "")) if p
    )
    names = [str(c) for c in table.df.columns]
    out = []
    for row in table.df.itertuples(index=False, name=None):
        pairs = " ; ".join(
            f"{n} : {v}" for n, v in zip(names, row, strict=True) if v not in (None, "")
        )
        out.append(f"{prefix} | {pairs}"[:max_chars])
    return out


def passages_text(table: Table, passages: PassageLookup | None) -> str:
    """Texts of the pages the table links to (empty without a lookup)."""
    if passages is None:
        return ""
    texts = (passages(link) for link in table_links(table))
    return "\n".join(t for t in texts if t)


def table_fields(table: Table, passages: PassageLookup | None = None) -> dict[str, str]:
    """Return every field of :data:`FIELDS` for one table."""
    return {
        "meta": meta_text(table),
        "cells": cells_text(table),
        "intro": str(table.metadata.get("intro", "") or ""),
        "passages": passages_text(table, passages),
    }
