"""Textual table representation (de Souza et al., TableRAG): caption, description, columns, values.

A :class:`TableRepresentation` is what a corpus index embeds (``to_text``) and
what an LLM sees about a table (``to_prompt``). With ``anonymize=True`` the
columns are shown to the LLM as ``Col1..ColN`` (de Souza et al.'s guard against
hallucinated column names) and ``column_map`` maps them back; the indexed text
always keeps the real names, since those are what questions mention.

This is an option, not part of the default pipeline: the corpus index
(:class:`~tablerag_agents.retrieval.corpus.CorpusIndex`) indexes its own
fields (title, columns, cells, intro, linked passages), which measured better
on OTT-QA. To use this representation, build a table's text with
``represent_table(table).to_text()`` (optionally with an
LLM-written description) and index it with any retriever, or show
``to_prompt()`` to a solver.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from tablerag_agents.tables.model import Table
from tablerag_agents.tables.render import render_table
from tablerag_agents.tables.values import clip, column_kind, format_value

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

logger = logging.getLogger(__name__)

#: Longest context text (section title + intro) kept in a representation.
MAX_CONTEXT_CHARS = 400


@dataclass
class ColumnInfo:
    """One column as described to models.

    Attributes:
        name: Name shown to the LLM (``Col3`` when anonymised).
        original: The real column name.
        dtype: ``int``, ``float``, ``bool``, ``datetime`` or ``text``.
        n_unique: Distinct non-missing values.
        n_missing: Missing cells.
        values: Most frequent distinct values, capped in count and length.
    """

    name: str
    original: str
    dtype: str
    n_unique: int
    n_missing: int
    values: list[str] = field(default_factory=list)


@dataclass
class TableRepresentation:
    """A JSON-serialisable description of one table (see the module docstring)."""

    table_id: str
    caption: str
    n_rows: int
    n_cols: int
    columns: list[ColumnInfo]
    description: str = ""
    context: str = ""
    column_map: dict[str, str] = field(default_factory=dict)

    @property
    def anonymized(self) -> bool:
        """Whether the LLM sees placeholder column names."""
        return bool(self.column_map)

    def map_back(self, name: str) -> str:
        """Return the real column name for a shown name (unknown names unchanged)."""
        return self.column_map.get(name, name)

    def to_text(self) -> str:
        """Text to embed for table retrieval (real column names, values last)."""
        parts = [self.caption, self.context, self.description]
        parts.append("Columns: " + ", ".join(f"{c.original} ({c.dtype})" for c in self.columns))
        parts.extend(f"{c.original}: {', '.join(c.values)}" for c in self.columns if c.values)
        return "\n".join(p for p in parts if p)

    def to_prompt(self) -> str:
        """Text describing the table to an LLM that will write code or SQL."""
        lines = [f"Table: {self.caption}"]
        if self.context:
            lines.append(f"Context: {self.context}")
        if self.description:
            lines.append(f"Description: {self.description}")
        lines.append(f"Size: {self.n_rows} rows x {self.n_cols} columns")
        lines.append("Columns:")
        for c in self.columns:
            about = f' (about "{c.original}")' if self.anonymized else ""
            shown = json.dumps(c.values, ensure_ascii=False)
            more = "" if len(c.values) >= c.n_unique else f" (of {c.n_unique} distinct)"
            lines.append(
                f'- "{c.name}"{about}: {c.dtype}; values {shown}{more}; {c.n_missing} missing'
            )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """Return plain JSON-serialisable data."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TableRepresentation:
        """Rebuild from :meth:`to_dict` output."""
        cols = [ColumnInfo(**c) for c in data.get("columns", [])]
        return cls(**{**data, "columns": cols})


def anonymize_columns(df: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """Rename columns to ``Col1..ColN``.

    Returns:
        The renamed copy and the mapping ``{"Col1": original, ...}``.
    """
    mapping = {f"Col{i}": str(c) for i, c in enumerate(df.columns, start=1)}
    renamed = df.copy()
    renamed.columns = pd.Index(list(mapping), dtype=object)
    return renamed, mapping


def restore_columns(df: pd.DataFrame, mapping: dict[str, str]) -> pd.DataFrame:
    """Rename placeholder columns back to the real names (other columns unchanged)."""
    return df.rename(columns=lambda c: mapping.get(str(c), c))


def summarize_column(
    series: pd.Series, name: str, *, max_values: int = 10, max_value_chars: int = 50
) -> ColumnInfo:
    """Describe one column: kind, distinct count, missing count, top values."""
    counts = series.value_counts(dropna=True)
    values = [format_value(v, max_value_chars) for v in counts.index[:max_values]]
    return ColumnInfo(
        name=name,
        original=str(series.name),
        dtype=column_kind(series),
        n_unique=int(len(counts)),
        n_missing=int(series.isna().sum()),
        values=values,
    )


def _context(table: Table) -> str:
    meta = table.metadata
    text = " ".join(str(meta[k]) for k in ("section_title", "intro") if meta.get(k))
    return clip(" ".join(text.split()), MAX_CONTEXT_CHARS)


def generate_description(model: BaseChatModel, prompt: str) -> str:
    """Ask ``model`` for a description; the global LangChain LLM cache applies."""
    reply = model.invoke(prompt)
    content = reply.content
    if isinstance(content, list):
        content = "".join(p if isinstance(p, str) else str(p.get("text", "")) for p in content)
    return " ".join(str(content).split())


def represent_table(
    table: Table,
    *,
    model: BaseChatModel | None = None,
    anonymize: bool = False,
    max_values: int = 10,
    max_value_chars: int = 50,
    preview_rows: int = 5,
    prompt_template: str | None = None,
) -> TableRepresentation:
    """Build the representation of ``table``, with an LLM description if ``model`` is given.

    Args:
        table: The table.
        model: Chat model that writes the description (``None``: no description).
        anonymize: Show columns to the LLM as ``Col1..ColN``.
        max_values: Distinct values kept per column (most frequent first).
        max_value_chars: Longest value text kept.
        preview_rows: Rows shown to the model when writing the description.
        prompt_template: Overrides ``prompts/describe_table.txt`` (``str.format``
            fields: caption, context, n_rows, n_cols, columns, preview).
    """
    df = table.df
    shown, mapping = anonymize_columns(df) if anonymize else (df, {})
    columns = [
        summarize_column(
            df.iloc[:, i],
            str(shown.columns[i]),
            max_values=max_values,
            max_value_chars=max_value_chars,
        )
        for i in range(df.shape[1])
    ]
    rep = TableRepresentation(
        table_id=table.id,
        caption=table.caption or table.id,
        n_rows=table.n_rows,
        n_cols=table.n_cols,
        columns=columns,
        context=_context(table),
        column_map=mapping,
    )
    if model is not None:
        if prompt_template is None:
            from tablerag_agents.prompts import load_prompt

            prompt_template = load_prompt("describe_table")
        col_lines = "\n".join(
            f"- {c.name}{f' ({c.original})' if anonymize else ''}: {c.dtype}, e.g. "
            + ", ".join(c.values[:3])
            for c in columns
        )
        prompt = prompt_template.format(
            caption=rep.caption,
            context=f"Context: {rep.context}" if rep.context else "",
            n_rows=rep.n_rows,
            n_cols=rep.n_cols,
            columns=col_lines,
            preview=render_table(shown, "markdown", max_rows=preview_rows, max_cell_chars=40),
        )
        rep.description = generate_description(model, prompt)
        logger.debug("described table %s in %d chars", table.id, len(rep.description))
    return rep
