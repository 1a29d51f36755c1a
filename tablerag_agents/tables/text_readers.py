"""Readers for text table files: CSV/TSV (delimiter sniffing), JSON and JSON lines.

Every reader returns a raw :class:`pandas.DataFrame` plus the list of repair
notes; :mod:`tablerag_agents.tables.loaders` cleans names and cells afterwards.
"""

from __future__ import annotations

import csv
import io
import json
import logging
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from tablerag_agents.errors import TableLoadError
from tablerag_agents.tables.limits import LoadLimits

logger = logging.getLogger(__name__)

#: Candidate delimiters, most common first (ties go to the earlier one).
DELIMITERS = (",", "\t", ";", "|", "#")
_SAMPLE_BYTES = 64 * 1024
_MAGIC = {
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF8": "a GIF image",
    b"%PDF": "a PDF document",
    b"PK\x03\x04": "a ZIP archive (xlsx/docx?)",
    b"\x1f\x8b": "gzip-compressed data",
    b"SQLite format 3\x00": "a SQLite database",
    b"PAR1": "a Parquet file",
}
_TEXT_CONTROLS = {9, 10, 12, 13}


def check_not_binary(raw: bytes, source: Path) -> None:
    """Raise if ``raw`` looks like binary data rather than text.

    Raises:
        TableLoadError: On a known binary signature, NUL bytes, or more than 5%
            control bytes in the first 64 KB.
    """
    for magic, kind in _MAGIC.items():
        if raw.startswith(magic):
            raise TableLoadError(source, f"file is binary ({kind}), not a text table")
    sample = raw[:_SAMPLE_BYTES]
    if b"\x00" in sample:
        raise TableLoadError(source, "file is binary (contains NUL bytes), not a text table")
    controls = sum(1 for b in sample if (b < 32 and b not in _TEXT_CONTROLS) or b == 127)
    if sample and controls / len(sample) > 0.05:
        raise TableLoadError(
            source, f"file is binary ({controls} control bytes in the first {len(sample)})"
        )


def remove_nul_bytes(raw: bytes, notes: list[str]) -> bytes:
    """Drop NUL bytes past the sampled start of a text file, with a note.

    :func:`check_not_binary` refuses a file with NUL bytes in its first 64 KB;
    later ones would otherwise reach the cells (and C strings cut at them).
    """
    count = raw.count(b"\x00")
    if not count:
        return raw
    first = raw.index(b"\x00")
    notes.append(f"removed {count} NUL byte(s), the first at byte {first}")
    return raw.replace(b"\x00", b"")


def decode_text(raw: bytes, source: Path, encoding: str | None, notes: list[str]) -> str:
    """Decode file bytes: the given encoding, else UTF-8, else a detected one.

    Falls back to charset detection (``charset_normalizer``), then cp1252, then
    latin-1 (which cannot fail); any fallback adds a note.
    """
    if encoding is not None:
        try:
            return raw.decode(encoding)
        except (UnicodeDecodeError, LookupError) as exc:
            raise TableLoadError(source, f"cannot decode as {encoding}: {exc}") from exc
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        first_error = exc
    guess: str | None = None
    try:
        from charset_normalizer import from_bytes

        best = from_bytes(raw[: 4 * _SAMPLE_BYTES]).best()
        guess = best.encoding if best is not None else None
    except ImportError:  # pragma: no cover - charset_normalizer ships with requests
        guess = None
    candidates = ["cp1252", "latin-1"]
    if guess and _is_multibyte(raw, guess):
        # Detection is only trusted for multi-byte encodings (Shift-JIS, GBK...):
        # on short Western text it confuses the single-byte code pages.
        candidates.insert(0, guess)
    for enc in candidates:
        try:
            text = raw.decode(enc)
        except (UnicodeDecodeError, LookupError):
            continue
        notes.append(
            f"not valid UTF-8 (byte {first_error.start}); decoded as {enc}, "
            "check accented characters"
        )
        return text
    raise TableLoadError(source, "cannot decode text")  # pragma: no cover - latin-1 never fails


def _is_multibyte(raw: bytes, encoding: str) -> bool:
    """Whether ``raw`` decodes with ``encoding`` into fewer chars than bytes."""
    sample = raw[:_SAMPLE_BYTES]
    try:
        return len(sample.decode(encoding, errors="ignore")) < len(sample) * 0.95
    except LookupError:
        return False


def sniff_delimiter(text: str) -> str:
    """Pick the delimiter whose field count is most consistent over the first lines.

    A candidate scores by the share of sampled records with its most common
    field count (that count must be at least 2); ties go to more fields, then
    to the order of :data:`DELIMITERS`. Defaults to ``","``.
    """
    sample = text[:_SAMPLE_BYTES]
    if len(text) > _SAMPLE_BYTES and "\n" in sample:
        sample = sample[: sample.rindex("\n")]
    best, best_score = ",", (0.0, 0)
    for delim in DELIMITERS:
        try:
            counts = [len(r) for r in csv.reader(io.StringIO(sample), delimiter=delim) if r][:50]
        except csv.Error:
            continue
        if not counts:
            continue
        mode, freq = Counter(counts).most_common(1)[0]
        if mode < 2:
            continue
        score = (freq / len(counts), mode)
        if score > best_score:
            best, best_score = delim, score
    return best


def _header(text: str, sep: str, escapechar: str | None) -> list[str]:
    try:
        reader = csv.reader(
            io.StringIO(text[: 4 * _SAMPLE_BYTES]), delimiter=sep, escapechar=escapechar
        )
        return next(reader, [])
    except csv.Error:
        return []


def _bad_lines(text: str, sep: str, escapechar: str | None, width: int) -> list[int]:
    """Line numbers (1-based, header = line 1) of records with more than ``width`` fields."""
    reader = csv.reader(io.StringIO(text), delimiter=sep, escapechar=escapechar)
    bad: list[int] = []
    try:
        for row in reader:
            if len(row) > width:
                bad.append(reader.line_num)
    except csv.Error as exc:
        logger.debug("line scan stopped: %s", exc)
    return bad


def read_csv_text(
    text: str,
    source: Path,
    notes: list[str],
    *,
    sep: str | None = None,
    escapechar: str | None = None,
    limits: LoadLimits | None = None,
    **opts: Any,
) -> tuple[pd.DataFrame, list[str]]:
    """Parse CSV text; returns the frame (generic column labels) and the raw header.

    Rows with more fields than the header are dropped and reported in ``notes``
    with their count and line numbers; short rows are padded with missing values.
    Only empty fields become missing values (``"NA"`` stays the string ``"NA"``).
    A header wider than ``limits.max_columns`` is refused before any row is
    parsed, and parsing stops one row past ``limits.max_cells``.

    Raises:
        TableLoadError: If the text has no header or does not parse at all.
        TableLimitError: If the table has too many columns or cells.
    """
    if not text.strip():
        raise TableLoadError(source, "file is empty")
    limits = limits or LoadLimits()
    sep = sep or sniff_delimiter(text)
    header = _header(text, sep, escapechar)
    if not header or all(not h.strip() for h in header) and len(header) <= 1:
        raise TableLoadError(source, "no header row found")
    width = len(header)
    limits.check_columns(source, width)
    max_rows = limits.max_rows(width)
    opts.setdefault("nrows", max_rows + 1)
    names = [f"_c{i}" for i in range(width)]
    kwargs: dict[str, Any] = dict(
        sep=sep,
        header=0,
        names=names,
        index_col=False,
        escapechar=escapechar,
        keep_default_na=False,
        na_values=[""],
        skip_blank_lines=True,
    )
    kwargs.update(opts)
    try:
        df = pd.read_csv(io.StringIO(text), on_bad_lines="error", **kwargs)
    except pd.errors.ParserError as exc:
        bad = _bad_lines(text, sep, escapechar, width)
        logger.debug("strict parse failed (%s); dropping long rows", exc)
        try:
            df = pd.read_csv(io.StringIO(text), on_bad_lines="skip", **kwargs)
        except (pd.errors.ParserError, ValueError) as exc2:
            raise TableLoadError(source, f"CSV does not parse: {exc2}") from exc2
        shown = ", ".join(map(str, bad[:10])) + (" ..." if len(bad) > 10 else "")
        notes.append(
            f"dropped {len(bad) or 'some'} row(s) with more than {width} fields "
            f"(lines {shown or 'unknown'})"
        )
    except (ValueError, csv.Error) as exc:
        raise TableLoadError(source, f"CSV does not parse: {exc}") from exc
    limits.check_shape(source, len(df), width, cut=len(df) > max_rows)
    return df, header


def _records_frame(records: list[Any], source: Path) -> pd.DataFrame:
    if not records:
        raise TableLoadError(source, "table has no rows")
    if all(isinstance(r, dict) for r in records):
        return pd.DataFrame.from_records(records)
    if all(isinstance(r, list) for r in records):
        head, body = records[0], records[1:]
        if not body:
            raise TableLoadError(source, "table has no rows")
        width = len(head)
        rows = [(list(r) + [None] * width)[:width] for r in body]
        return pd.DataFrame(rows, columns=range(width)).set_axis(head, axis=1)
    raise TableLoadError(source, "JSON rows must all be objects (records) or all be lists")


def read_json_text(text: str, source: Path, lines: bool | None = None) -> pd.DataFrame:
    """Parse JSON records, ``{"columns", "data"}``, ``{column: [values]}`` or JSON lines.

    Raises:
        TableLoadError: If the JSON is invalid or has no table shape.
    """
    if not text.strip():
        raise TableLoadError(source, "file is empty")
    if lines is not True:
        try:
            data: Any = json.loads(text)
            lines = False
        except json.JSONDecodeError as exc:
            if lines is False or "Extra data" not in str(exc):
                raise TableLoadError(source, f"not valid JSON: {exc}") from exc
            lines = True
    if lines:
        data = []
        for no, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    data.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise TableLoadError(source, f"line {no} is not valid JSON: {exc}") from exc
    if isinstance(data, dict):
        if isinstance(data.get("columns"), list) and isinstance(data.get("data"), list):
            return _records_frame([data["columns"], *data["data"]], source)
        lists = [v for v in data.values() if isinstance(v, list)]
        if len(data) == 1 and lists and all(isinstance(r, dict | list) for r in lists[0]):
            return _records_frame(lists[0], source)  # {"rows": [records...]}
        if lists and len(lists) == len(data) and len({len(v) for v in lists}) == 1:
            if not lists[0]:
                raise TableLoadError(source, "table has no rows")
            return pd.DataFrame(data)  # column-oriented {"col": [values...]}
        raise TableLoadError(
            source,
            "JSON object is not a table (expected records, {columns, data}, "
            "{column: [values]} or {key: [records]})",
        )
    if isinstance(data, list):
        return _records_frame(data, source)
    raise TableLoadError(source, f"JSON holds a {type(data).__name__}, not a table")
