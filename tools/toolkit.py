"""``TableRAGToolkit``: every table tool, built from one set of tables and one config."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pandas as pd
from langchain_core.tools import BaseTool, BaseToolkit
from pydantic import ConfigDict, Field, PrivateAttr
from tablerag_agents.graphs import Context
from tablerag_agents.tools._examples import DataExamples
from tablerag_agents.tools._namespace import NamespaceStore
from tablerag_agents.tools.ask_tables import AskTablesTool
from tablerag_agents.tools.catalog import TableCatalog
from tablerag_agents.tools.clarify_terms import ClarifyTermsTool
from tablerag_agents.tools.describe_table import DescribeTableTool
from tablerag_agents.tools.filter_table import FilterTableTool
from tablerag_agents.tools.python_sandbox import PythonSandboxTool
from tablerag_agents.tools.retrieve_table_context import RetrieveTableContextTool
from tablerag_agents.tools.search_tables import SearchTablesTool
from tablerag_agents.tools.sql_query import SQLQueryTool
from tablerag_agents.tools.wikipedia_summary import WikipediaSummaryTool

from tablerag_agents.config import Settings
from tablerag_agents.resources import Resources
from tablerag_agents.tables import Table, load_tables
from tablerag_agents.tables.source import SourceSettings
from tablerag_agents.tables.source_tables import load_database_tables

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from langchain_core.language_models import BaseChatModel

    from tablerag_agents.sandbox import Sandbox, SandboxPolicy

ToolSet = Literal["small", "full"]
#: The default tool set, for small local models: the whole pipeline as one tool. On 20 WTQ dev
#: questions the embedded 1.5B model answered 0.50 with it against 0.25 with
#: ``describe_table`` + ``sql_query`` (``bench/agent_tool_calling.py``, README).
SMALL_TOOLS = ("ask_tables",)


class TableRAGToolkit(BaseToolkit):
    """The table tools over one catalog of tables, sharing models, sandbox and caches.

    Build it with :meth:`from_folder`, :meth:`from_dataframes`, :meth:`from_uri`
    (tables left in a database) or :meth:`from_index`; close it (or use it as a
    context manager) to stop the sandbox it created.

    Example:
        >>> with TableRAGToolkit.from_folder("tables/") as toolkit:
        ...     agent = create_agent(model, toolkit.get_tools())  # or get_tools("full")
    """

    catalog: TableCatalog
    """Tables, models and sandbox the tools share."""
    namespaces: NamespaceStore = Field(default_factory=NamespaceStore)
    """Saved ``python_sandbox`` variables per conversation."""
    owns_resources: bool = True
    """Close the resources (and the sandbox they created) in :meth:`close`."""
    ask_context: Context = Field(default_factory=Context)
    """Graph settings of ``ask_tables`` (solver, filters, clarifiers...)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    _tools: list[BaseTool] | None = PrivateAttr(default=None)

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_tables(
        cls,
        tables: Iterable[Table],
        *,
        index_path: str | Path | None = None,
        settings: Settings | None = None,
        resources: Resources | None = None,
        chat_model: BaseChatModel | None = None,
        embeddings: Embeddings | None = None,
        sandbox: Sandbox | None = None,
        sandbox_policy: SandboxPolicy | None = None,
        ask_context: Context | None = None,
    ) -> TableRAGToolkit:
        """Build the toolkit over ``tables`` (and the corpus index at ``index_path``).

        Args:
            tables: In-memory tables (ids must be unique).
            index_path: A saved corpus index whose tables are also available.
            settings: Where models come from (default: env vars and ``tablerag.toml``).
            resources: Share these resources (e.g. with a graph); not closed by
                :meth:`close`. The other model/sandbox arguments are then ignored.
            chat_model: Chat model for tools that need one (default: from settings).
            embeddings: Embeddings for retrieval (default: from settings).
            sandbox: Use this sandbox (not closed by :meth:`close`).
            sandbox_policy: Limits of the sandbox created on first use.
            ask_context: Graph settings of ``ask_tables`` (default: ``Context()``).
        """
        owns = resources is None
        if resources is None:
            resources = Resources(
                settings,
                chat_model=chat_model,
                embeddings=embeddings,
                sandbox=sandbox,
                sandbox_policy=sandbox_policy,
            )
        seen: set[str] = set()
        for table in tables:
            if table.id in seen:
                raise ValueError(f"duplicate table id {table.id!r}")
            seen.add(table.id)
            resources.add_table(table)
        catalog = TableCatalog(resources, corpus_path=index_path)
        return cls(catalog=catalog, owns_resources=owns, ask_context=ask_context or Context())

    @classmethod
    def from_folder(cls, path: str | Path, **kwargs: Any) -> TableRAGToolkit:
        """Load every table file under ``path`` (csv, tsv, xlsx, parquet, json, sqlite...).

        Unreadable files are skipped with a warning. Keyword arguments are those
        of :meth:`from_tables`.
        """
        if not Path(path).exists():
            raise FileNotFoundError(f"no such file or folder: {path}")
        return cls.from_tables(load_tables(path, on_error="warn"), **kwargs)

    @classmethod
    def from_dataframes(
        cls, frames: Mapping[str, pd.DataFrame] | Iterable[pd.DataFrame | Table], **kwargs: Any
    ) -> TableRAGToolkit:
        """Use DataFrames: ``{"name": df}`` (ids are the names) or a list (ids ``table_1``...).

        A list may also hold :class:`Table` objects (with their captions).
        """
        if isinstance(frames, Mapping):
            tables = [Table(str(name), df, caption=str(name)) for name, df in frames.items()]
        else:
            tables = [
                item if isinstance(item, Table) else Table(f"table_{i}", item)
                for i, item in enumerate(frames, start=1)
            ]
        return cls.from_tables(tables, **kwargs)

    @classmethod
    def from_uri(
        cls,
        url: str,
        tables: Sequence[str],
        *,
        source_settings: SourceSettings | None = None,
        **kwargs: Any,
    ) -> TableRAGToolkit:
        """Use tables that stay in a PostgreSQL or SQLite database (a SQLAlchemy URL).

        Nothing is copied: ``sql_query`` runs on the database in a read-only session
        with a statement timeout, the schema and cell indexes come from aggregate
        queries, and the Python tools see a bounded sample
        (``source_settings.sample_rows``). Connect as a role that may only read
        these tables.

        Example:
            >>> TableRAGToolkit.from_uri("postgresql://reader@db/shop", tables=["orders"])

        Args:
            url: ``postgresql://user:password@host:5432/db`` or ``sqlite:///path/file.db``.
            tables: Table names (``schema.table`` for PostgreSQL); they become the ids.
            source_settings: Sample size and limits (default: ``TABLERAG_SOURCE_*``).
            **kwargs: Those of :meth:`from_tables`.
        """
        if isinstance(tables, str):
            raise TypeError("tables must be a list of table names, not one string")
        return cls.from_tables(
            load_database_tables(url, tables, settings=source_settings), **kwargs
        )

    @classmethod
    def from_index(cls, path: str | Path, **kwargs: Any) -> TableRAGToolkit:
        """Use a corpus index saved by ``tablerag index`` or ``CorpusIndex.save``."""
        if not (Path(path) / "manifest.json").is_file():
            raise FileNotFoundError(f"no corpus index at {path} (manifest.json is missing)")
        return cls.from_tables([], index_path=path, **kwargs)

    # -- tools --------------------------------------------------------------------------

    def get_tools(self, names: ToolSet | Iterable[str] = "small") -> list[BaseTool]:
        """Return tools (the same instances on every call).

        Their descriptions quote real table ids, column names and values of the
        catalog as it is when the tools are first built.

        Args:
            names: ``"small"`` (the default): ``ask_tables`` alone, which finds the
                table and runs the whole pipeline (a small local model drives one
                tool well, not nine); ``"full"``: every tool; or tool names, in that
                order.
        """
        if self._tools is None:
            catalog = self.catalog
            examples = DataExamples.from_catalog(catalog)
            shared: dict[str, Any] = {"catalog": catalog, "examples": examples}
            self._tools = [
                SearchTablesTool(**shared),
                DescribeTableTool(**shared),
                RetrieveTableContextTool(**shared),
                FilterTableTool(**shared),
                ClarifyTermsTool(**shared),
                WikipediaSummaryTool(**shared),
                PythonSandboxTool(**shared, namespaces=self.namespaces),
                SQLQueryTool(**shared),
                AskTablesTool(**shared, context=self.ask_context),
            ]
        if names == "full":
            return list(self._tools)
        if names == "small":
            names = SMALL_TOOLS
        elif isinstance(names, str):
            raise KeyError(f"no tool set {names!r}: use 'small', 'full' or a list of tool names")
        return [self.get_tool(name) for name in names]

    def get_tool(self, name: str) -> BaseTool:
        """Return the tool called ``name``."""
        tools = self.get_tools("full")
        for tool in tools:
            if tool.name == name:
                return tool
        raise KeyError(f"no tool {name!r}; tools: {[t.name for t in tools]}")

    @property
    def resources(self) -> Resources:
        """The shared models, sandbox and tables (pass them to the graph to share them)."""
        return self.catalog.resources

    # -- lifetime -----------------------------------------------------------------------

    def close(self) -> None:
        """Drop saved variables; close the resources (sandbox, caches) if the toolkit made them."""
        self.namespaces.clear()
        if self.owns_resources:
            self.catalog.resources.close()

    def __enter__(self) -> TableRAGToolkit:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
