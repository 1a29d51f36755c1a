"""Read one sheet of an untrusted ``.xlsx`` workbook.

openpyxl parses xlsx XML with ``defusedxml`` (a dependency), which refuses
entity expansion and external entities; before any XML parser sees the file,
a workbook whose XML parts declare a DTD is refused outright (OOXML never does).
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import ParseError
from xml.parsers import expat

import pandas as pd
from openpyxl.utils.cell import range_boundaries

from tablerag_agents.errors import TableLoadError
from tablerag_agents.tables.db_readers import pick_name
from tablerag_agents.tables.header_detect import Merge, find_blocks


def _xml_refusal(source: Path, exc: BaseException) -> TableLoadError | None:
    """A clear error when defusedxml refused the workbook's XML (anywhere in the cause chain)."""
    try:
        from defusedxml import DefusedXmlException
    except ImportError:  # pragma: no cover - a declared dependency
        return None
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, DefusedXmlException):
            return TableLoadError(
                source,
                "refused: the workbook's XML declares entities (an XML bomb or external "
                f"entity): {seen!r}",
            )
        seen = seen.__cause__ or seen.__context__
    return None


class _PrologEnd(Exception):
    """The first element began: the prolog, where a DTD would stand, is over."""


class _DoctypeFound(Exception):
    """The XML part declares a document type (and so possibly entities)."""


def _declares_doctype(stream: Any, chunk_size: int = 1 << 16) -> bool:
    """True if the XML in ``stream`` has a DOCTYPE before its first element.

    Reads only up to the first element (comments and processing instructions
    before it are skipped whatever their length).
    """

    def on_doctype(*_: Any) -> None:
        raise _DoctypeFound

    def on_element(*_: Any) -> None:
        raise _PrologEnd

    parser = expat.ParserCreate()
    parser.StartDoctypeDeclHandler = on_doctype
    parser.StartElementHandler = on_element
    try:
        while chunk := stream.read(chunk_size):
            parser.Parse(chunk, False)
        parser.Parse(b"", True)
    except _DoctypeFound:
        return True
    except (_PrologEnd, expat.ExpatError):
        return False  # malformed XML is openpyxl's to report
    return False


def _refuse_xml_doctypes(source: Path) -> None:
    """Refuse a workbook whose XML parts declare a DTD (OOXML never does).

    Checked before any XML parser sees the file, so the refusal does not depend
    on which parser openpyxl picks (lxml when installed, else defusedxml).
    """
    try:
        with zipfile.ZipFile(source) as archive:
            for info in archive.infolist():
                if info.filename.lower().endswith((".xml", ".rels", ".vml")):
                    with archive.open(info) as member:
                        if _declares_doctype(member):
                            raise TableLoadError(
                                source,
                                "refused: the workbook's XML declares entities (an XML bomb or "
                                f"external entity): a DOCTYPE in {info.filename}",
                            )
    except (zipfile.BadZipFile, OSError) as exc:
        raise TableLoadError(source, f"not a readable .xlsx workbook: {exc}") from exc


def _merges(source: Path, worksheet_path: str | None) -> list[Merge]:
    """The sheet's merged ranges, read from its XML part with a streaming parser."""
    if not worksheet_path:
        return []
    found: list[Merge] = []

    def on_element(tag: str, attrs: dict[str, str]) -> None:
        if tag.rsplit(":", 1)[-1] == "mergeCell" and "ref" in attrs and ":" in attrs["ref"]:
            try:
                c0, r0, c1, r1 = range_boundaries(attrs["ref"])
            except (ValueError, TypeError):
                return
            if None not in (c0, r0, c1, r1):
                found.append((r0 - 1, c0 - 1, r1 - 1, c1 - 1))  # type: ignore[operator]

    parser = expat.ParserCreate()
    parser.StartElementHandler = on_element
    try:
        with zipfile.ZipFile(source) as archive, archive.open(worksheet_path.lstrip("/")) as part:
            while chunk := part.read(1 << 16):
                parser.Parse(chunk, False)
            parser.Parse(b"", True)
    except (KeyError, zipfile.BadZipFile, OSError, expat.ExpatError):
        return []  # a malformed part is openpyxl's to report; without merges we still read
    return found


def read_excel(
    source: Path, sheet: str | int | None, block: int | None = None
) -> tuple[pd.DataFrame, str, dict[str, Any]]:
    """Read one table of one sheet of an ``.xlsx`` workbook.

    A plain sheet's first non-empty row is the header. A sheet with title rows,
    a header over several rows (merged or not) or several tables stacked with
    empty rows between them is read with
    :func:`~tablerag_agents.tables.header_detect.find_blocks`.

    Args:
        source: The workbook.
        sheet: Sheet name or index (optional if it has one sheet).
        block: Which table of the sheet (1-based); needed when it holds several.

    Returns:
        The frame (header labels as its columns), the sheet name, and extra
        metadata (``title``, ``header_rows``, ``block``, ``blocks`` when they apply).
    """
    _refuse_xml_doctypes(source)
    try:
        book = pd.ExcelFile(source, engine="openpyxl")
    except (zipfile.BadZipFile, ValueError, OSError, KeyError, ParseError) as exc:
        refusal = _xml_refusal(source, exc)
        if refusal is not None:
            raise refusal from exc
        raise TableLoadError(source, f"not a readable .xlsx workbook: {exc}") from exc
    with book:
        names = [str(s) for s in book.sheet_names]
        if isinstance(sheet, int):
            if not 0 <= sheet < len(names):
                raise TableLoadError(source, f"no sheet #{sheet}; sheets are {names}")
            name = names[sheet]
        else:
            name = pick_name(source, names, sheet, "sheet")
        try:
            raw = pd.read_excel(book, sheet_name=name, header=None)
        except (ValueError, KeyError, ParseError) as exc:
            refusal = _xml_refusal(source, exc)
            if refusal is not None:
                raise refusal from exc
            raise TableLoadError(source, f"cannot read sheet {name!r}: {exc}") from exc
        worksheet_path = getattr(book.book[name], "_worksheet_path", None)
    merges = _merges(source, worksheet_path)
    blocks = find_blocks(raw, merges)
    if not blocks:
        raise TableLoadError(source, f"sheet {name!r} is empty")
    if len(blocks) > 1 and block is None:
        listed = "; ".join(
            f"#{i} ({b.title or ', '.join(str(h) for h in b.header[:4])})"
            for i, b in enumerate(blocks, start=1)
        )
        raise TableLoadError(
            source,
            f"sheet {name!r} holds {len(blocks)} tables: {listed}; pass block=N "
            "or use load_tables to get them all",
        )
    if block is not None and not 1 <= block <= len(blocks):
        raise TableLoadError(source, f"no table #{block} on sheet {name!r} (it has {len(blocks)})")
    found = blocks[(block or 1) - 1]
    meta: dict[str, Any] = {}
    if len(blocks) > 1:
        meta.update(block=block, blocks=len(blocks))
    if found.title:
        meta["title"] = found.title
    if found.header_rows > 1:
        meta["header_rows"] = found.header_rows
    if len(blocks) == 1 and not merges and not found.title and found.header_rows == 1:
        # A plain sheet: read exactly as before the detection existed.
        raw = raw.dropna(how="all").dropna(axis=1, how="all")
        header = raw.iloc[0].tolist()
        body = raw.iloc[1:].reset_index(drop=True).infer_objects()
        return body.set_axis(header, axis=1), name, meta
    return found.body.set_axis(found.header, axis=1), name, meta
