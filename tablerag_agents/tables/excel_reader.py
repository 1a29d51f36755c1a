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

from tablerag_agents.errors import TableLoadError
from tablerag_agents.tables.db_readers import pick_name


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


def read_excel(source: Path, sheet: str | int | None) -> tuple[pd.DataFrame, str]:
    """Read one sheet of an ``.xlsx`` workbook; the first row is the header.

    Returns:
        The frame (header row still as the first data row's labels) and the sheet name.
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
    raw = raw.dropna(how="all").dropna(axis=1, how="all")
    if raw.empty:
        raise TableLoadError(source, f"sheet {name!r} is empty")
    header = raw.iloc[0].tolist()
    body = raw.iloc[1:].reset_index(drop=True)
    body = body.infer_objects()
    return body.set_axis(header, axis=1), name
