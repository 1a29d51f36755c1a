"""Run settings of the TableRAG graph: one field per knob, so an ablation is a setting.

Pass a :class:`Context` as ``context=`` to ``graph.invoke``/``stream`` (or set
the fields in LangGraph Studio's configuration panel). Unset fields keep the
defaults below, which follow what was measured (see the README).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

from tablerag_agents.filtering.pieta import DEFAULT_MAX_WINDOWS
from tablerag_agents.solve.factory import DEFAULT_VOTE_K

FilterName = Literal["none", "semantic", "semantic_maxsim", "llm", "pieta"]
TableFormat = Literal["markdown", "string", "html"]


@dataclass(kw_only=True)
class Context:
    """Per-run settings of the TableRAG graph."""

    solver: str = field(
        default="sql",
        metadata={
            "description": "First solver: sql, pyreact, process_df, read_table, vote, or a "
            "reading baseline: read_schema, rand_row_sampling, row_col_retrieval."
        },
    )
    retry_solvers: list[str] = field(
        default_factory=lambda: ["process_df", "read_table"],
        metadata={
            "description": "Solvers tried in turn (skipping any already run) while no solver "
            "has produced a value; a 0 is a value. The default chain SQL -> process_df -> "
            "ReadTable was the best on held-out WTQ. [] runs the first solver alone."
        },
    )
    index_dir: str | None = field(
        default=None,
        metadata={
            "description": "Refused when set: the corpus index is configuration of whoever "
            "builds or deploys the graph (build_graph(index_dir=...), TABLERAG_INDEX_DIR, "
            "tablerag serve --index), never chosen by a run."
        },
    )
    table_scope: list[str] | None = field(
        default=None,
        metadata={
            "description": "Registered table ids this run may use (None: all of them); it "
            "narrows what a run sees and never adds a table."
        },
    )
    top_k_tables: int = field(
        default=5, metadata={"description": "Tables fetched from the corpus search."}
    )
    max_tables: int = field(
        default=2,
        metadata={"description": "Tables given to the solver when several score alike (1: one)."},
    )
    multi_table_margin: float = field(
        default=0.05,
        metadata={
            "description": "Keep a further table when its score is within this fraction of the "
            "best table's score."
        },
    )
    rerank: bool = field(
        default=False, metadata={"description": "Let the chat model re-rank the top tables."}
    )
    expand_query: bool = field(
        default=True,
        metadata={"description": "Ask the model for schema and cell queries (large tables only)."},
    )
    large_table_cells: int = field(
        default=5_000,
        metadata={
            "description": "Tables with more cells get schema/cell retrieval instead of rows."
        },
    )
    budget: int = field(
        default=10_000, metadata={"description": "Cell budget B of the cell database."}
    )
    schema_k: int = field(default=8, metadata={"description": "Columns retrieved per query."})
    cell_k: int = field(default=10, metadata={"description": "Cell values retrieved per query."})
    filter: FilterName = field(
        default="none",
        metadata={
            "description": "Sub-table filter: none, semantic (dense), semantic_maxsim "
            "(late interaction), llm (self-consistency), pieta."
        },
    )
    filter_scope: Literal["prompt", "table"] = field(
        default="prompt",
        metadata={
            "description": "prompt: show the filtered rows as relevant rows; table: the solver "
            "only sees the sub-table."
        },
    )
    filter_min_cells: int = field(
        default=0, metadata={"description": "Filter only tables with more cells than this."}
    )
    filter_rows: int = field(
        default=10, metadata={"description": "Rows the semantic filter keeps."}
    )
    filter_columns: int = field(
        default=8, metadata={"description": "Columns the semantic filter keeps."}
    )
    filter_samples: int = field(
        default=5, metadata={"description": "Sampled filter programs of the LLM filter."}
    )
    filter_vote: Literal["subtable", "columns"] = field(
        default="subtable",
        metadata={
            "description": "LLM filter vote: subtable (the most common sub-table needs a "
            "majority) or columns (columns half the programs chose, every row)."
        },
    )
    pieta_max_windows: int = field(
        default=DEFAULT_MAX_WINDOWS,
        metadata={
            "description": "Most PieTa windows (model calls) per round, 3 rounds at most: "
            "the stride grows up to no overlap, then the windows grow taller, so every cell "
            "is still seen; 0 keeps the paper's 3 x 3 windows at stride 1 whatever the cost."
        },
    )
    ground_literals: bool = field(
        default=False,
        metadata={
            "description": "SQL and process_df solvers: when the model's fix still fails, "
            "rerun its code with each literal that matches no cell but lies inside exactly "
            "one cell replaced by that cell. Off: on 30 WTQ dev questions it changed "
            "accuracy by -0.033 [-0.167, +0.067]."
        },
    )
    typed_columns: bool = field(
        default=False,
        metadata={
            "description": "SQL, process_df and PyReAct solvers: type each column and add "
            "parsed companions beside the originals (Population__num, Time__sec, Date__date, "
            "Term__from/Term__to), flag total rows (is_summary), drop repeated header rows "
            "and turn tables stored with entries as columns. Off: on 40 WTQ dev questions "
            "16 right against the default's 16 (2 wins, 2 losses)."
        },
    )
    row_numbers: bool = field(
        default=False,
        metadata={
            "description": "SQL, process_df and PyReAct solvers: add a row_no column "
            "(1 = first row) that the prompt names for questions about order (after, "
            "before, next, last). Off: on 40 WTQ dev questions 16 right against the "
            "default's 16 (2 wins, 2 losses) for 1.55x the prompt tokens."
        },
    )
    filter_hints: bool = field(
        default=False,
        metadata={
            "description": "SQL solver: when a query returns nothing (no rows, or one "
            "0/NULL), the retry prompt also names its text conditions that no cell of "
            "their column meets, or that the question never mentions. Off: on 40 WTQ dev "
            "questions 16 right against the default's 16 (1 win, 1 loss)."
        },
    )
    table_example: bool = field(
        default=False,
        metadata={
            "description": "SQL solver: write the prompt's example over the table's own "
            "columns and values instead of a fixed one. Off until measured."
        },
    )
    pick_columns: bool = field(
        default=False,
        metadata={
            "description": "SQL solver: first ask the model which columns the question "
            "needs (one short call), then show only those in the query prompt. Off: on 40 "
            "WTQ dev questions 15 right against the default's 16, with three times the "
            "failed queries (the model names columns the table does not have)."
        },
    )
    several_rows: bool = field(
        default=False,
        metadata={
            "description": "SQL solver: when a query's answer has several items, ask once "
            "whether the question wants one (a missing condition or LIMIT 1); repeating "
            "the query keeps them all. Off: on 40 WTQ dev questions 15 right against the "
            "default's 16 (1 win, 2 losses)."
        },
    )
    clarify_terms: bool = field(
        default=False,
        metadata={"description": "Explain abbreviations and ambiguous terms of the question."},
    )
    wikipedia: bool = field(
        default=False,
        metadata={"description": "Add a Wikipedia summary of the table's topic as background."},
    )
    table_format: TableFormat = field(
        default="markdown",
        metadata={"description": "How tables are written in prompts: markdown, string or html."},
    )
    charts: bool = field(
        default=True,
        metadata={
            "description": "Answer a question that asks for a plot ('plot sales by month', "
            "'draw a bar chart of ...') with a chart: the model writes matplotlib code that "
            "runs in the sandbox, and the answer carries the PNG and its data. Off: such "
            "questions go to the solvers like any other."
        },
    )
    rewrite_followups: bool = field(
        default=True,
        metadata={"description": "Rewrite a follow-up question into a standalone one."},
    )
    write_sentence: bool = field(
        default=False,
        metadata={
            "description": "Let the chat model write the answer sentence from the question and "
            "the answer (one more call); off: a template sentence naming the cited rows."
        },
    )
    sql_samples: int = field(
        default=1,
        metadata={
            "description": "SQL solver: queries sampled per question (the extra ones in one "
            "request); above 1 the majority answer wins and its confidence is the share of "
            "queries that gave it. 1: one query."
        },
    )
    second_opinion: bool = field(
        default=False,
        metadata={
            "description": "When a program (SQL, pandas) computed the answer, read the table "
            "once more (one more model call) and raise the confidence if the reading agrees, "
            "lower it if not; the answer stays the program's. Off: on 40 WTQ dev questions "
            "the 5 answers a reading agreed with were all right, for 2.0x the prompt tokens."
        },
    )
    second_opinion_solver: Literal["read_table", "process_df", "sql"] = field(
        default="read_table",
        metadata={
            "description": "Who gives the second opinion: read_table (a reading of the whole "
            "table), process_df (a pandas program, for SQL answers) or sql (for pandas "
            "answers). A solver never checks its own answer."
        },
    )
    vote_k: int = field(
        default=DEFAULT_VOTE_K,
        metadata={
            "description": "Solver vote: programs sampled per code path (SQL and pandas, one "
            "request each) beside one reading of the table; 1 gives 3 votes, 5 gives 11."
        },
    )
    min_confidence: float = field(
        default=0.0,
        metadata={
            "description": "Answers whose confidence (the vote's agreement, or a single run's "
            "estimate; see the README) is below this are flagged, or withheld with "
            "low_confidence=abstain. 0: never."
        },
    )
    low_confidence: Literal["flag", "abstain"] = field(
        default="flag",
        metadata={
            "description": "Below min_confidence: flag (the answer is kept and marked "
            "low_confidence) or abstain (the answer text says it is not confident enough; "
            "the withheld answer is best_guess)."
        },
    )

    def __post_init__(self) -> None:
        """Refuse a corpus folder chosen per run (a request must not pick server files) and
        settings outside their range."""
        if self.index_dir is not None:
            raise ValueError(
                f"index_dir={self.index_dir!r} is not a run setting: the corpus index is "
                "chosen where the graph is built (build_graph(resources, index_dir=...); the "
                "langgraph.json graph reads TABLERAG_INDEX_DIR; tablerag serve takes --index)"
            )
        if self.vote_k < 1:
            raise ValueError(f"vote_k must be >= 1, got {self.vote_k}")
        if self.sql_samples < 1:
            raise ValueError(f"sql_samples must be >= 1, got {self.sql_samples}")
        if not 0.0 <= self.min_confidence <= 1.0:
            raise ValueError(f"min_confidence must be in [0, 1], got {self.min_confidence}")

    @classmethod
    def from_dict(cls, values: dict[str, Any] | None) -> Context:
        """Build a context from a plain dict, rejecting unknown keys."""
        values = dict(values or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown graph settings {unknown}; known: {sorted(known)}")
        return cls(**values)


NOT_FOUND = "not found in the tables"
"""The answer text of an abstention."""
LOW_CONFIDENCE = "not confident enough to answer"
"""The answer text when an answer below ``min_confidence`` is withheld."""
