"""The answer step: short answer items, a sentence, and the cells that back them up."""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tablerag_agents.solve.base import CitedCell, Provenance, frame_records
from tablerag_agents.solve.normalize import answer_key, normalize_value
from tablerag_agents.tables.typed_table import TypedTable

logger = logging.getLogger(__name__)

MAX_ITEMS = 50
"""A value with more items than this is a table, not an answer."""


def scalar_text(value: Any) -> str:
    """Format one scalar for an answer (``3.0`` -> ``"3"``, ``True`` -> ``"yes"``)."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value.is_integer():
            return str(int(value))
        return f"{value:.6g}" if abs(value) < 1e15 else str(value)
    if isinstance(value, pd.Timestamp):
        return value.date().isoformat() if value == value.normalize() else value.isoformat()
    return str(value).strip()


def value_to_items(value: Any) -> list[str] | None:
    """Turn a code result into answer items, or None if it is not answer-shaped.

    Scalars give one item; lists, Series and one-column tables give one item per
    value; a 1x1 table gives its cell. Wide tables, dicts with many keys and very
    long lists are not answers (None).
    """
    if isinstance(value, pd.DataFrame):
        if value.shape == (1, 1):
            return value_to_items(value.iat[0, 0])
        if value.shape[1] == 1 and 0 < len(value) <= MAX_ITEMS:
            return value_to_items(value.iloc[:, 0].tolist())
        return None
    if isinstance(value, pd.Series | pd.Index | np.ndarray):
        return value_to_items(list(value)) if 0 < len(value) <= MAX_ITEMS else None
    if isinstance(value, dict):
        if len(value) == 1:
            return value_to_items(next(iter(value.values())))
        return None
    if isinstance(value, list | tuple | set | frozenset):
        items = [scalar_text(v) for v in value if not isinstance(v, list | tuple | dict)]
        if len(items) != len(value) or not 0 < len(items) <= MAX_ITEMS:
            return None
        return [i for i in items if i != ""] or None
    text = scalar_text(value)
    return [text] if text else None


_QUANTITY_QUESTION = re.compile(
    r"^\s*(how (many|much|long|old|far|tall)|what (is|was|are|were) the (total|number|sum|"
    r"average|amount|count|difference)|total|number of)\b",
    re.I,
)


def _is_measure_column(values: pd.Series) -> bool:
    """True for numbers that measure something (not years, which name things)."""
    numbers = pd.to_numeric(values, errors="coerce")
    if not numbers.notna().all():
        return False
    years = numbers.between(1000, 2100) & (numbers == numbers.round())
    return not bool(years.all())


def answer_column_items(value: Any, question: str, columns: Iterable[str] = ()) -> list[str] | None:
    """Answer items from a small result table that carries a helper column.

    Code for "which player scored the least goals?" often returns the name *and*
    the goals. When exactly one column is not a measure (text, or years), or for
    "how many..." questions exactly one is a measure, that column is the answer;
    otherwise None. A Series whose labels
    are all column names of the table (one row) is read as a one-row table.

    Args:
        value: The code's result.
        question: The question it answers.
        columns: Column names of the input tables (to recognise a row Series).
    """
    known = {str(c) for c in columns}
    if isinstance(value, pd.Series) and known and len(value) > 1:
        if all(str(label) in known for label in value.index):
            value = value.to_frame().T
    if not isinstance(value, pd.DataFrame) or not 0 < len(value) <= MAX_ITEMS:
        return None
    if not 2 <= value.shape[1] <= 4:
        return None
    numeric = [c for c in value.columns if _is_measure_column(value[c])]
    text = [c for c in value.columns if c not in numeric]
    wanted = numeric if _QUANTITY_QUESTION.search(question) else text
    if len(wanted) != 1:
        return None
    return value_to_items(value[wanted[0]].tolist())


def majority_index(answers: Sequence[Sequence[str]]) -> int | None:
    """Index of the answer most runs agree on (compared after normalisation).

    Every run that produced a value votes, whatever the value: ``0`` or
    ``"none"`` can be right. Runs with no items (no value, an error) do not
    vote; the earliest answer wins ties. None if no run produced a value.
    """
    pool = [i for i, a in enumerate(answers) if a]
    if not pool:
        return None
    votes = Counter(answer_key(answers[i]) for i in pool)
    top = max(votes.values())
    return next(i for i in pool if votes[answer_key(answers[i])] == top)


def join_items(items: Iterable[str]) -> str:
    """The short answer string: items joined by ``|``."""
    return "|".join(items)


def _indexed_rows(value: Any, main: pd.DataFrame) -> pd.DataFrame | None:
    """Return ``value`` as a frame if its index labels point at rows of ``main``."""
    frame: pd.DataFrame | None = None
    if isinstance(value, pd.DataFrame):
        frame = value
    elif isinstance(value, pd.Series) and value.name is not None:
        frame = value.to_frame()
    if frame is None or frame.empty or len(frame) > MAX_ITEMS:
        return None
    if isinstance(frame.index, pd.RangeIndex) and len(frame) == len(main):
        return None  # the whole table (or a transformed copy) says nothing
    if not frame.index.isin(main.index).all():
        return None
    shared = [c for c in frame.columns if c in main.columns]
    if not shared:
        return None
    # The rows must really be the original rows: shared cells equal (numbers
    # compared numerically, since solvers may have cleaned "7,169" into 7169).
    orig = main.loc[frame.index, shared]
    for a, b in zip(orig.to_numpy().ravel(), frame[shared].to_numpy().ravel(), strict=True):
        va, vb = normalize_value(scalar_text(a)), normalize_value(scalar_text(b))
        if not (va.matches(vb) or (va.text == "" and vb.text == "")):
            return None
    return frame[shared]


def locate_cells(
    tables: Mapping[str, pd.DataFrame],
    items: Iterable[str],
    *,
    columns: Iterable[str] | None = None,
    limit: int = 10,
) -> list[CitedCell]:
    """Find cells whose value equals an answer item (numbers compared numerically).

    Args:
        tables: Tables to search, by id.
        items: Answer items.
        columns: If given, only cells in these columns are cited (e.g. the
            columns the code used), which avoids citing unrelated equal values.
        limit: Maximum number of cells returned.
    """
    wanted = [normalize_value(i) for i in items if str(i).strip()]
    allowed = set(columns) if columns is not None else None
    out: list[CitedCell] = []
    for tid, df in tables.items():
        for col in df.columns:
            if allowed is not None and str(col) not in allowed:
                continue
            for pos, raw in enumerate(df[col].tolist()):
                cell = normalize_value(scalar_text(raw))
                if any(cell.matches(w) and w.matches(cell) for w in wanted):
                    out.append(CitedCell(table=tid, row=pos, column=str(col), value=str(raw)))
                    if len(out) >= limit:
                        return out
    return out


def columns_mentioned(code: str, df: pd.DataFrame) -> list[str]:
    """Columns of ``df`` whose name appears quoted in ``code``."""
    names = []
    for c in df.columns:
        name = str(c)
        if any(q + name + q in code for q in ("'", '"')):
            names.append(name)
    return names


# Calls only: column names such as "Avg. Attendance" must not look like AVG(.
_AGGREGATE = re.compile(
    r"\.(?:sum|count|mean|median|nunique|diff|std)\s*\(|\blen\s*\(|\.(?:size|shape)\b"
    r"|\b(?:count|sum|avg|mean|median)\s*\(",
    re.I,
)


def is_aggregate(code: str) -> bool:
    """True if ``code`` computes a count/sum/average..., whose value is not a table cell."""
    return bool(_AGGREGATE.search(code))


def rows_provenance(value: Any, main: pd.DataFrame, main_id: str) -> Provenance | None:
    """Cite the rows of ``main`` that a pandas result still carries (by index), if any."""
    if not main.index.is_unique:
        return None
    rows = _indexed_rows(value, main)
    if rows is None:
        return None
    cells = []
    evidence = []
    for label, row in rows.iterrows():
        pos = int(main.index.get_loc(label))
        record: dict[str, Any] = {"row": pos}
        for col in row.index:
            original = scalar_text(main.iat[pos, main.columns.get_loc(col)])
            cells.append(CitedCell(table=main_id, row=pos, column=str(col), value=original))
            record[str(col)] = original
        evidence.append(record)
    return Provenance(method="result_rows", cells=cells[:50], evidence_rows=evidence[:10])


def _view_cells(view: TypedTable, table_id: str, cells: Iterable[CitedCell]) -> list[CitedCell]:
    """The original cells that cells of a typed view show (row numbers, flags and a
    transposed table's former column names show none), each once."""
    out: list[CitedCell] = []
    seen: set[tuple[int, str]] = set()
    for cell in cells:
        origin = view.origin(cell.row, cell.column)
        if origin is None or origin in seen:
            continue
        seen.add(origin)
        row, column = origin
        raw = view.source.iat[row, view.source.columns.get_loc(column)]
        out.append(CitedCell(table=table_id, row=row, column=column, value=scalar_text(raw)))
    return out


def _from_view(prov: Provenance | None, view: TypedTable, table_id: str) -> Provenance | None:
    """``prov`` found in a typed view, with its cells (and row numbers) made original."""
    if prov is None:
        return None
    cells = _view_cells(view, table_id, prov.cells)
    if not cells:
        return None
    evidence = prov.evidence_rows
    if not view.transposed:
        evidence = [{**r, "row": int(view.sources[int(r["row"])])} for r in evidence]
    return Provenance(method=prov.method, cells=cells, evidence_rows=evidence)


def build_provenance(
    value: Any,
    items: list[str] | None,
    tables: Mapping[str, pd.DataFrame],
    *,
    code: str = "",
    main_id: str | None = None,
    evidence: Any = None,
    views: Mapping[str, TypedTable] | None = None,
) -> Provenance:
    """Trace an answer back to the input tables.

    Rows returned by pandas code keep their original index, so they are cited
    directly (``result_rows``); ``evidence`` is an earlier result (e.g. the rows
    a later step counted) used the same way when the answer itself is a number
    computed by an aggregate. Otherwise the cells whose value equals an answer
    item are cited (``value_match``), limited to the columns the code named when
    it named any. A count or sum is never "found" by value matching: a cell that
    happens to hold the same number proves nothing.

    When the code ran over a typed view of the main table (``views``: parsed
    companions, row numbers, a turned table), rows and values are found in the
    view and cited as the original cells they show: a value read from
    ``Population__num`` cites the ``Population`` cell it was parsed from.
    """
    main_id = main_id or next(iter(tables))
    view = (views or {}).get(main_id)
    main = tables[main_id] if view is None else view.frame

    def cite(prov: Provenance | None) -> Provenance | None:
        return prov if view is None else _from_view(prov, view, main_id)

    direct = cite(rows_provenance(value, main, main_id))
    if direct is not None:
        return direct
    rows_value = value if isinstance(value, pd.DataFrame) else None
    records = frame_records(rows_value, limit=10) if rows_value is not None else []
    if not items:
        return Provenance(evidence_rows=records)
    numeric = all(normalize_value(i).number is not None for i in items)
    if numeric and code and is_aggregate(code):
        earlier = cite(rows_provenance(evidence, main, main_id)) if evidence is not None else None
        return earlier or Provenance(evidence_rows=records)
    cols = columns_mentioned(code, main) if code else []
    # Through a view, hits in row numbers show no original cell: look further, then map.
    limit = 10 if view is None else 50
    cells = locate_cells({main_id: main}, items, columns=cols or None, limit=limit)
    if not cells and cols:
        cells = locate_cells({main_id: main}, items, limit=limit)
    if view is not None:
        cells = _view_cells(view, main_id, cells)[:10]
    if not cells:
        return Provenance(evidence_rows=records)
    return Provenance(method="value_match", cells=cells, evidence_rows=records)


def explain(answer: str, provenance: Provenance, sentence: str | None = None) -> str:
    """Write the natural-language answer: ``sentence`` (from a model) or a template.

    The cited table rows are appended so the reader knows where to check.
    """
    if not answer:
        return "No answer could be found in the table."
    rows = sorted({c.row for c in provenance.cells})
    where = ""
    if rows:
        shown = ", ".join(str(r) for r in rows[:8]) + (" ..." if len(rows) > 8 else "")
        where = f" (table row{'s' if len(rows) > 1 else ''} {shown})"
    base = (sentence or "").strip().rstrip(".") or f"The answer is {answer.replace('|', ', ')}"
    return f"{base}{where}."
