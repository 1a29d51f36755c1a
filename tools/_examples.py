"""Examples for the tool descriptions, taken from the tables the tools serve.

A model copies the examples it is shown: an example naming a table or column
that does not exist sends a small model after it. So the descriptions quote
only real ids, column names and cell values, read from the catalog when the
toolkit builds its tools; without readable tables they carry no examples.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd
from langchain_core.tools import ToolException
from pydantic import BaseModel, create_model
from tablerag_agents.tools.catalog import MAX_DEFAULT_TABLES, variable_name

if TYPE_CHECKING:
    from tablerag_agents.tools.catalog import TableCatalog

#: Longest cell value quoted in an example.
MAX_VALUE_CHARS = 40
#: Tables tried (in catalog order) for one with two usable columns.
MAX_TRIED = 3
#: Rows of a table read to choose the example columns and row.
SAMPLE_ROWS = 200


@dataclass(frozen=True)
class DataExamples:
    """One real table, two of its columns and one row's values, for the descriptions."""

    table_id: str
    """Id of the example table."""
    variable: str
    """Its name in ``sql_query`` and ``python_sandbox``."""
    label_column: str
    """A text column naming the rows (the one with the most distinct values)."""
    label_value: str
    """That column's value in the example row."""
    value_column: str
    """Another column, numeric if there is one."""
    value: str
    """That column's value in the example row."""
    listed: tuple[str, ...] = ()
    """Every table id when there are few enough to list (else empty)."""
    n_tables: int = 1
    """How many tables the catalog has."""

    @classmethod
    def from_catalog(cls, catalog: TableCatalog) -> DataExamples | None:
        """Read the examples from the first usable table of ``catalog`` (None if none is)."""
        try:
            ids = catalog.ids()
        except ToolException:  # a corpus index that cannot be opened
            return None
        listed = tuple(ids) if len(ids) <= MAX_DEFAULT_TABLES else ()
        for table_id in ids[:MAX_TRIED]:
            try:
                df = catalog.get(table_id).df
            except ToolException:  # an index entry without table data
                continue
            picked = _pick(df)
            if picked is not None:
                return cls(table_id, variable_name(table_id), *picked, listed, len(ids))
        return None

    def sql(self) -> str:
        """A SELECT over the example table that returns the example value."""
        literal = "'" + self.label_value.replace("'", "''") + "'"
        return (
            f'SELECT "{self.value_column}" FROM {self.variable} '
            f'WHERE "{self.label_column}" = {literal}'
        )

    def python(self) -> str:
        """A pandas expression over the example table that returns the example value."""
        var, label = self.variable, self.label_column
        return f"{var}.loc[{var}[{label!r}] == {self.label_value!r}, {self.value_column!r}]"


def _pick(table: pd.DataFrame) -> tuple[str, str, str, str] | None:
    """``(label column, its value, value column, its value)`` from one row, or None.

    Only the first :data:`SAMPLE_ROWS` rows are read: a huge table costs no more.
    """
    df = table.head(SAMPLE_ROWS)
    if df.shape[1] < 2 or df.empty:
        return None
    columns = [df.iloc[:, i] for i in range(df.shape[1])]
    names = [str(c) for c in df.columns]
    texts = [i for i, col in enumerate(columns) if not pd.api.types.is_numeric_dtype(col)]
    label = max(texts, key=lambda i: columns[i].nunique()) if texts else 0
    others = [i for i in range(len(columns)) if i != label]
    numeric = [i for i in others if pd.api.types.is_numeric_dtype(columns[i])]
    digits = [i for i in others if columns[i].astype(str).str.contains(r"\d").any()]
    value = (numeric or digits or others)[0]
    for row in range(len(df)):
        pair = [_cell(columns[label].iloc[row]), _cell(columns[value].iloc[row])]
        if pair[0] and pair[1]:
            return names[label], pair[0], names[value], pair[1]
    return None


def _cell(value: Any) -> str:
    """The value as one short line, or "" when it is missing or too long to quote."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return ""
    text = str(value).strip()
    return text if 0 < len(text) <= MAX_VALUE_CHARS and "\n" not in text else ""


def with_field_notes(schema: type[BaseModel], notes: dict[str, str]) -> type[BaseModel]:
    """A subclass of ``schema`` whose fields' descriptions end with ``notes[field]``."""
    fields: dict[str, Any] = {}
    for name, note in notes.items():
        info = copy.copy(schema.model_fields[name])
        info.description = f"{info.description or ''} {note}".strip()
        fields[name] = (info.annotation, info)
    return create_model(  # type: ignore[call-overload,no-any-return]
        schema.__name__, __base__=schema, __module__=schema.__module__, **fields
    )
