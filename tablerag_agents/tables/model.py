"""The in-memory table type every stage works on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from tablerag_agents.tables.source import TableSource


@dataclass
class Table:
    """A named table with its caption and free-form metadata.

    Attributes:
        id: Stable identifier (file stem, corpus id...). Unique within a corpus.
        df: The cells. Column names are unique, non-empty strings.
        caption: Human title of the table (page title, file name...).
        metadata: Extra context such as ``section_title``, ``intro``, ``source``.
        source: Where the table lives when it is not in memory (a database table,
            a file scanned out of core); ``df`` is then only a bounded sample of it.
    """

    id: str
    df: pd.DataFrame
    caption: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    source: TableSource | None = field(default=None, repr=False, compare=False)

    @property
    def n_rows(self) -> int:
        """Number of data rows (all of them, also for a table with a ``source``)."""
        if self.source is not None:
            return self.source.n_rows()
        return len(self.df)

    @property
    def n_cols(self) -> int:
        """Number of columns."""
        return len(self.df.columns)

    @property
    def n_cells(self) -> int:
        """Rows times columns."""
        return self.n_rows * self.n_cols
