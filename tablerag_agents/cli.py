"""The `tablerag` command line: index tables, search them, ask questions.

Thin over the engine: every command parses options, calls one engine function,
and prints the result (or a one-line error with a non-zero exit code).
"""

from __future__ import annotations

import json
import logging
import sys
import time
import warnings
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from tablerag_agents.config import Settings
from tablerag_agents.errors import ConfigError, TableRAGError
from tablerag_agents.solve.factory import SOLVER_NAMES, check_solver_name

if TYPE_CHECKING:
    from tablerag_agents.graphs import Context
    from tablerag_agents.graphs.result import TableQAResult
    from tablerag_agents.solve.chart_image import Chart

app = typer.Typer(
    name="tablerag",
    help=(
        "Answer questions over tables with retrieval and sandboxed code.\n\n"
        "Models come from settings: TABLERAG_* environment variables or tablerag.toml "
        "(see `tablerag info`). The default is the embedded offline model."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console(soft_wrap=True)  # long paths must not break lines (scripts grep the output)
err_console = Console(stderr=True, soft_wrap=True)

F = TypeVar("F", bound=Callable[..., Any])


def _friendly_errors(func: F) -> F:
    """Turn expected errors into a one-line message and exit code 1 (2 for usage)."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except TableRAGError as exc:
            err_console.print(Text("error: ", style="red") + Text(str(exc)))
            raise typer.Exit(1) from None
        except (FileNotFoundError, ValueError) as exc:
            err_console.print(Text("error: ", style="red") + Text(str(exc)))
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]


@app.callback()
def main(
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log progress.")] = False,
) -> None:
    """Answer questions over tables with retrieval and sandboxed code."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    warnings.showwarning = _show_warning


def _show_warning(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
    """Print library warnings (repaired or skipped tables...) as one short line."""
    err_console.print(Text("warning: ", style="yellow") + Text(str(message)))


UriOption = Annotated[
    str | None,
    typer.Option(
        "--uri",
        help="A PostgreSQL or SQLite database (SQLAlchemy URL: postgresql://user@host/db, "
        "sqlite:///shop.db) whose --table NAMEs are used where they live; a password in it "
        "is never printed or saved.",
    ),
]


def _check_uri(uri: str, tables: list[str] | None) -> None:
    """Refuse a path given as ``--uri``, and ``--uri`` without table names."""
    from tablerag_agents.tables.source_tables import is_database_url

    if not is_database_url(uri):
        raise ValueError(
            "--uri wants a database URL (postgresql://user@host/db or sqlite:///file.db); "
            "for a table file use --table FILE"
        )
    if not tables:
        # Not every table of the database: the user names what the model may read.
        raise ValueError("name the database's tables: --table NAME (repeatable)")


@app.command()
@_friendly_errors
def index(
    out: Annotated[Path, typer.Option("--out", "-o", help="Index directory to create/extend.")],
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Table files (csv, tsv, xlsx, parquet, json, sqlite, duckdb) or folders, "
            "or an OTT-QA style tables.json with --ottqa."
        ),
    ] = None,
    uri: UriOption = None,
    tables: Annotated[
        list[str] | None,
        typer.Option(
            "--table",
            "-t",
            help="With --uri: a table of that database to index (repeatable; required).",
        ),
    ] = None,
    ottqa: Annotated[
        bool, typer.Option(help="Read PATHS as OTT-QA corpus JSON ({id: table}).")
    ] = False,
    rebuild: Annotated[bool, typer.Option(help="Delete an existing index first.")] = False,
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = True,
    passages: Annotated[
        Path | None,
        typer.Option(
            help="JSONL(.gz) of linked-page texts ({title, url, intro} lines) for the cells' "
            "links, e.g. Wikipedia intros: fills the 'passages' search field."
        ),
    ] = None,
    backend: Annotated[
        str | None,
        typer.Option(
            help="Vector engine of a new index: faiss (default, files in the index), qdrant "
            "or milvus (the [qdrant] / [milvus] extras)."
        ),
    ] = None,
    url: Annotated[
        str | None,
        typer.Option(
            help="The engine: a server (http://host:6333, http://host:19530), a local Qdrant "
            "folder, or a Milvus Lite .db file (default: a local store inside the index)."
        ),
    ] = None,
    collection: Annotated[
        str | None,
        typer.Option(help="Collection-name prefix on the engine (default: a fresh name)."),
    ] = None,
    trust_engine: Annotated[
        bool,
        typer.Option(help="Open the engine an existing index's manifest names (and remember)."),
    ] = False,
    workers: Annotated[
        int,
        typer.Option(
            min=0,
            envvar="TABLERAG_INDEX_WORKERS",
            help="Processes that parse tables and build their search fields (0: one per "
            "core). 1 by default: on a shared 2-core machine 2 were slower.",
        ),
    ] = 1,
    batch_size: Annotated[
        int,
        typer.Option(
            min=1,
            help="Tables per committed batch: a killed run, rerun with the same arguments, "
            "resumes after the last one.",
        ),
    ] = 1024,
) -> None:
    """Index tables into a directory for `search` and `ask` (adds to an existing index).

    Table files, or with --uri URL --table NAME the tables of a PostgreSQL or
    SQLite database (the index keeps a bounded sample of each; the rows stay
    in the database). Resumable: rerun an interrupted command unchanged and it
    continues where it stopped.
    """
    from tablerag_agents.retrieval.corpus_folder import index_tables

    if uri is not None:
        _check_uri(uri, tables)
        if paths or ottqa:
            raise ValueError("give table files (PATHS) or --uri URL --table NAME, not both")
    elif tables:
        raise ValueError("--table names tables of a database: give its --uri URL too")
    elif not paths:
        raise ValueError("give table files or folders (PATHS), or --uri URL --table NAME")
    stats = index_tables(
        paths or [],
        out,
        db_url=uri,
        db_tables=tables or [],
        settings=Settings(),
        ottqa=ottqa,
        rebuild=rebuild,
        progress=progress,
        passages=passages,
        backend=backend,
        url=url,
        collection=collection,
        trust_engine=trust_engine,
        workers=workers,
        batch_size=batch_size,
    )
    resumed = stats["resumed_batches"]
    if resumed:
        console.print(f"resumed an interrupted run ({resumed} batches were already done)")
    console.print(
        f"indexed {stats['added']} tables into {out} "
        f"({stats['total']} in the index, {stats['skipped']} skipped, {stats['seconds']:.1f}s; "
        f"vectors: {stats['engine']})"
    )


@app.command()
@_friendly_errors
def search(
    question: Annotated[str, typer.Argument(help="The question to find tables for.")],
    index_dir: Annotated[Path, typer.Option("--index", "-i", help="Index directory.")],
    k: Annotated[int, typer.Option("-k", min=1, max=1000, help="How many tables.")] = 5,
    method: Annotated[
        str, typer.Option(help="Retrieval method: hybrid, bm25, dense or colbert.")
    ] = "hybrid",
    rerank: Annotated[
        bool,
        typer.Option(
            help="Let the chat model pick among the top 10; its pick is fused with the"
            " retrieval scores and only breaks near-ties (small models rarely beat retrieval)."
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    url: Annotated[
        str | None,
        typer.Option(help="Where the index's vectors are (a Qdrant/Milvus server or local store)."),
    ] = None,
    trust_engine: Annotated[
        bool,
        typer.Option(
            help="Open the engine the index's manifest names (needed for an index built "
            "elsewhere; remembered for this folder)."
        ),
    ] = False,
) -> None:
    """Rank the indexed tables for a question."""
    from tablerag_agents.retrieval.corpus_folder import search_tables

    hits = search_tables(
        question,
        index_dir,
        settings=Settings(),
        k=k,
        method=method,
        rerank=rerank,
        url=url,
        trust_engine=trust_engine,
    )
    if as_json:
        typer.echo(json.dumps(hits, indent=2, ensure_ascii=False))
        return
    table = RichTable("rank", "table id", "score", "caption")
    for rank, hit in enumerate(hits, 1):
        table.add_row(str(rank), hit["table_id"], f"{hit['score']:.4f}", hit.get("caption", ""))
    console.print(table)


def _context(solver: str | None, settings: list[str] | None) -> Context:
    """The graph context from ``--solver`` and ``--set key=value`` pairs (JSON values allowed)."""
    from tablerag_agents.graphs.context_overrides import context_from_settings

    if solver is not None:
        check_solver_name(solver)
    values: dict[str, str] = {}
    for pair in settings or []:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set wants KEY=VALUE, got {pair!r}")
        values[key.strip()] = raw
    if solver is not None:
        values.setdefault("solver", json.dumps(solver))
    return context_from_settings(values)


SolverOption = Annotated[
    str | None,
    typer.Option(
        help=f"First solver: {', '.join(SOLVER_NAMES)} (default sql; while none has a value, "
        "the graph tries retry_solvers: process_df, then read_table)."
    ),
]
StreamOption = Annotated[bool, typer.Option(help="Show the graph's nodes as they run.")]
SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="Graph setting KEY=VALUE, repeatable (e.g. --set filter=semantic "
        "--set budget=1000 --set clarify_terms=true); see tablerag_agents.graphs.Context.",
    ),
]


@app.command()
@_friendly_errors
def ask(
    question: Annotated[str, typer.Argument(help="The question to answer.")],
    table_args: Annotated[
        list[str] | None,
        typer.Option(
            "--table",
            "-t",
            help="Answer over this table file; with --uri, a table of that database "
            "(repeatable: the best match for the question is used).",
        ),
    ] = None,
    index_dir: Annotated[
        Path | None,
        typer.Option(
            "--index",
            "-i",
            help="Answer over the best tables of this index (with --uri and --table: those "
            "tables are queried in the database, not in the sample the index saved).",
        ),
    ] = None,
    uri: UriOption = None,
    solver: SolverOption = None,
    settings: SetOption = None,
    stream: StreamOption = False,
    trace: Annotated[
        Path | None, typer.Option(help="Write the run's per-node trace as JSON to this file.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full result as JSON.")] = False,
    chart_out: Annotated[
        Path | None,
        typer.Option(
            "--chart-out",
            help="Where to save the PNG when the question asks for a plot (default: "
            "chart.png in the current folder, or chart-2.png... when taken; a folder: "
            "that name inside it).",
        ),
    ] = None,
) -> None:
    """Answer a question over a table file, database tables or an index (the TableRAG graph).

    A database table (--uri URL --table NAME) is queried where it lives: SQL runs
    in a read-only session, never on a copy. A question that asks for a plot
    ("plot sales by month") is answered with a chart: the PNG is saved to a file
    (--chart-out) and its data printed.
    """
    from tablerag_agents.qa import answer_question

    table_path: Path | None = None
    if uri is not None:
        _check_uri(uri, table_args)
    elif len(table_args or []) > 1:
        raise ValueError("give one --table FILE (several --table name tables of a --uri URL)")
    elif table_args:
        table_path = Path(table_args[0])
    if uri is None and (table_path is None) == (index_dir is None):
        raise ValueError(
            "give exactly one of --table FILE or --index DIR (or --uri URL --table NAME)"
        )
    if chart_out is not None and not chart_out.is_dir() and not chart_out.parent.is_dir():
        raise ValueError(f"--chart-out: the folder {str(chart_out.parent)!r} does not exist")
    ctx = _context(solver, settings)
    result = answer_question(
        question,
        table_path=table_path,
        index_dir=index_dir,
        db_url=uri,
        db_tables=(table_args or []) if uri is not None else [],
        context=ctx,
        on_event=_print_event if stream else None,
    )
    if trace is not None:
        trace.write_text(json.dumps(result.trace, indent=2, ensure_ascii=False, default=str))
    chart = result.answer.chart
    saved = _save_chart(chart.png_bytes(), chart_out) if chart is not None else None
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        if saved is not None:
            err_console.print(f"Chart saved to {saved}")
        return
    _print_answer(result)
    if chart is not None and saved is not None:
        _print_chart(chart, saved)


@app.command()
@_friendly_errors
def demo(
    out: Annotated[
        Path | None, typer.Option(help="Where to put the demo index (default: the cache dir).")
    ] = None,
    solver: SolverOption = None,
    settings: SetOption = None,
    stream: StreamOption = False,
) -> None:
    """Index the bundled sample tables and answer one question about each with the chat model."""
    from tablerag_agents.evaluation.denotation import answers_match
    from tablerag_agents.qa import DEMO_QUESTIONS, answer_question, sample_tables_dir
    from tablerag_agents.retrieval.corpus_folder import index_tables

    ctx = _context(solver, settings)
    index_dir = out or Path(Settings().cache_dir) / "demo-index"
    stats = index_tables(
        [sample_tables_dir()], index_dir, settings=Settings(), rebuild=False, progress=False
    )
    console.print(f"Index: {index_dir} ({stats['total']} sample tables)")
    started, right = time.perf_counter(), 0
    questions = DEMO_QUESTIONS
    for i, item in enumerate(questions, 1):
        console.print(Text(f"\n[{i}/{len(questions)}] {item['question']}", style="bold"))
        result = answer_question(
            item["question"],
            index_dir=index_dir,
            context=ctx,
            on_event=_print_event if stream else None,
        )
        answer = result.answer
        ok = not answer.abstained and answers_match(answer.items or answer.text, item["expected"])
        right += ok
        _print_answer(result)
        mark = Text("right", style="green") if ok else Text("wrong", style="red")
        console.print(Text("Expected: ") + Text(" | ".join(item["expected"]) + " ") + mark)
    console.print(f"\n{right} of {len(questions)} right in {time.perf_counter() - started:.0f}s")


@app.command()
@_friendly_errors
def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on.")] = 8000,
    token: Annotated[
        list[str] | None,
        typer.Option(
            envvar="TABLERAG_TOKEN",
            help="Require 'Authorization: Bearer TOKEN'. Repeat it (or separate tokens by "
            "spaces in TABLERAG_TOKEN) for several clients: each token's uploads and threads "
            "are its own.",
        ),
    ] = None,
    db: Annotated[
        str | None,
        typer.Option(
            help="Where threads are kept: a SQLite file (default: in the cache dir), or "
            "postgresql://user:password@host:port/dbname, which replicas of the server can "
            "share (needs the postgres extra).",
            envvar="TABLERAG_DB",
        ),
    ] = None,
    index_dir: Annotated[
        Path | None, typer.Option("--index", "-i", help="Answer over this saved index.")
    ] = None,
    tables: Annotated[
        Path | None, typer.Option("--tables", help="Register the table files in this folder.")
    ] = None,
    max_upload_mb: Annotated[
        float, typer.Option(min=0.001, help="Largest table upload, in MB.")
    ] = 20.0,
    max_uploads: Annotated[
        int, typer.Option(min=1, help="Most uploaded tables kept (then 507).")
    ] = 1000,
    max_upload_total_mb: Annotated[
        float,
        typer.Option(min=0.001, help="Most MB of uploaded files kept (then 507)."),
    ] = 512.0,
    max_runs: Annotated[
        int, typer.Option(min=1, help="Runs going at once; past that a message gets a 503.")
    ] = 32,
    solver: SolverOption = None,
    settings: SetOption = None,
) -> None:
    """Serve the graph over HTTP: OpenAI-compatible chat, threads, table uploads."""
    from tablerag_agents.server import serve as run_server

    run_server(
        host=host,
        port=port,
        token=token,
        db_path=db,
        index_dir=index_dir,
        tables_dir=tables,
        max_runs=max_runs,
        max_upload_bytes=int(max_upload_mb * 1024 * 1024),
        max_uploads=max_uploads,
        max_upload_total_bytes=int(max_upload_total_mb * 1024 * 1024),
        context=_context(solver, settings),
        announce=console.print,
    )


@app.command()
@_friendly_errors
def mcp(
    index_dir: Annotated[
        Path | None, typer.Option("--index", "-i", help="Serve the tables of this saved index.")
    ] = None,
    tables: Annotated[
        Path | None, typer.Option("--tables", help="Register the table files in this folder.")
    ] = None,
    http: Annotated[
        bool, typer.Option("--http", help="Streamable HTTP on 127.0.0.1 instead of stdio.")
    ] = False,
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="Port of --http (0: a free one).")
    ] = 8765,  # mcp_server.DEFAULT_PORT (not imported here: the mcp extra is optional)
    tools: Annotated[
        str,
        typer.Option(
            help="'full' (every tool), 'small' (ask_tables, the whole pipeline as one tool) "
            "or comma-separated tool names."
        ),
    ] = "full",
    solver: SolverOption = None,
    settings: SetOption = None,
) -> None:
    """Serve the table tools over MCP (stdio for a desktop host, or HTTP on loopback).

    Clients name tables by id only, never by path. Start-up notes go to stderr:
    with stdio, stdout is the protocol.
    """
    try:
        from tablerag_agents.mcp_server import serve_mcp
    except ModuleNotFoundError as exc:
        if exc.name != "mcp":
            raise
        raise ConfigError(
            "tablerag mcp needs the mcp extra: pip install -c constraints.txt -e '.[mcp]'"
        ) from None
    serve_mcp(
        tables_dir=tables,
        index_dir=index_dir,
        context=_context(solver, settings),
        tools=tools,
        http=http,
        port=port,
        announce=err_console.print,
    )


@app.command("eval")
@_friendly_errors
def eval_(
    dataset: Annotated[
        str, typer.Option(help="Dataset format: wtq, tabfact, ottqa, fetaqa, jsonl or files.")
    ],
    data: Annotated[
        Path, typer.Option(help="The dataset's folder (laid out like ../shared/data) or file.")
    ],
    methods: Annotated[
        list[str],
        typer.Option(
            "--method",
            help="Method to evaluate, repeatable: graph, a solver (sql, read_table, ...), "
            "read_schema, rand_row_sampling, row_col_retrieval or pandas_agent.",
        ),
    ],
    split: Annotated[
        str, typer.Option(help="dev (for tuning) or test (reported once): disjoint samples.")
    ],
    n: Annotated[
        int | None, typer.Option("--n", min=1, help="Questions in the seeded sample.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the sample.")] = 0,
    ids: Annotated[
        Path | None,
        typer.Option(
            "--ids",
            exists=True,
            dir_okay=False,
            help="Instead of --n: a file of question ids (one per line, '#' comments) to "
            "ask in its order; each must be on the --split side.",
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            help="Chat model (default: settings, i.e. the embedded local model): an "
            "init_chat_model string such as openai:gpt-4o-mini, or a model served at "
            "TABLERAG_BASE_URL."
        ),
    ] = None,
    settings: SetOption = None,
    out: Annotated[Path, typer.Option(help="Folder for the records and summaries.")] = Path(
        "eval-results"
    ),
    name: Annotated[
        str | None,
        typer.Option(help="File name stem (default: dataset-split-method-settings-n-seed)."),
    ] = None,
    workers: Annotated[
        int,
        typer.Option(min=1, help="Questions answered at once (threads; for hosted models)."),
    ] = 1,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    summary_only: Annotated[
        bool,
        typer.Option(
            help="Ask nothing: write NAME.json from the questions recorded so far "
            "(a run still going or stopped), marked partial when some are missing."
        ),
    ] = False,
    allow_mixed_commits: Annotated[
        bool,
        typer.Option(
            help="Resume records answered by other code (another commit or a dirty tree); "
            "refused by default. The summary and the report list the commits."
        ),
    ] = False,
) -> None:
    """Evaluate methods on a seeded dev/test sample; a rerun resumes a stopped run.

    Writes NAME.jsonl (one scored record per question, as each finishes) and
    NAME.json (split, sample ids, git commit, model, settings, metrics with 95%
    intervals) per method. LLM responses are not cached, so timings are real.
    """
    from tablerag_agents.evaluation.runner import parse_settings, run_eval
    from tablerag_agents.resources import Resources

    overrides: dict[str, Any] = {"llm_cache": False}
    if model is not None:
        overrides["chat_model"] = model
    with Resources(Settings(**overrides)) as resources:
        try:
            outcomes = run_eval(
                dataset=dataset,
                data_path=data,
                methods=methods,
                split=split,
                n=n,
                seed=seed,
                ids_file=ids,
                settings=parse_settings(settings or []),
                resources=resources,
                out_dir=out,
                name=name,
                workers=workers,
                progress=progress,
                summary_only=summary_only,
                allow_mixed_commits=allow_mixed_commits,
            )
        except KeyboardInterrupt:
            err_console.print(
                f"interrupted: the records so far are in {out}; rerun the same command to resume"
            )
            raise typer.Exit(130) from None
    for outcome in outcomes:
        m = outcome.summary["metrics"]
        low, high = m["ci"]
        console.print(
            f"{outcome.summary['method']}: {m['metric']} {m['value']:.3f} "
            f"[{low:.3f}, {high:.3f}] on {_questions_done(outcome.summary)} {split} questions, "
            f"exceptions {m['exception_rate']:.0%}, {m['mean_seconds']:.1f} s/q "
            f"-> {outcome.summary_file}"
        )
        commits = outcome.summary.get("answered_at_commits") or {}
        if len(commits) > 1:
            listed = ", ".join(f"{c} ({k})" for c, k in sorted(commits.items()))
            err_console.print(
                Text("warning: ", style="yellow")
                + Text(f"{outcome.records.name} mixes answers of several commits: {listed}")
            )


def _questions_done(summary: dict[str, Any]) -> str:
    partial = summary.get("partial")
    return f"{partial['done']} of {partial['of']}" if partial else str(summary["metrics"]["n"])


@app.command()
@_friendly_errors
def report(
    runs: Annotated[
        list[Path], typer.Argument(help="Run summaries (NAME.json) written by `tablerag eval`.")
    ],
    out: Annotated[Path, typer.Option(help="Folder for report.md and the plots.")] = Path(
        "eval-report"
    ),
    column_split: Annotated[
        str | None,
        typer.Option(
            help="Label the table with this split and refuse runs on any other "
            "(e.g. test: no dev figure in a test column)."
        ),
    ] = None,
    plots: Annotated[bool, typer.Option(help="Write PNG plots (needs matplotlib).")] = True,
    baseline: Annotated[
        str | None,
        typer.Option(
            help="Pair every run with the runs of this method (or label) on their shared "
            "questions; default: every pair of runs on one dataset and split."
        ),
    ] = None,
) -> None:
    """Compare runs side by side: a Markdown table per split and PNG plots.

    Prints the Markdown; writes it as report.md beside the plots (metric per
    method with intervals, vs prompt tokens, vs cell budget when runs sweep it).
    """
    from tablerag_agents.evaluation.report import write_report

    result = write_report(runs, out, column_split=column_split, plots=plots, baseline=baseline)
    for warning in result.warnings:
        err_console.print(Text("warning: ", style="yellow") + Text(warning))
    typer.echo(result.markdown)
    err_console.print(f"wrote {result.markdown_path} and {len(result.plots)} plots")


@app.command()
def info() -> None:
    """Show the effective settings (no secrets) and where they come from."""
    settings = Settings()
    console.print_json(json.dumps(settings.public_dict(), default=str))
    console.print(
        "Set TABLERAG_<FIELD> environment variables or write tablerag.toml "
        "(or point TABLERAG_CONFIG at a TOML file) to change them."
    )


def _print_event(mode: str, chunk: Any) -> None:
    """Print a graph stream event as one dim line (``--stream``)."""
    if mode == "updates":
        for node in chunk:
            console.print(f"[dim]> {node}[/dim]")
    elif mode == "custom":
        details = ", ".join(f"{k}={v}" for k, v in chunk.items() if k != "node")
        console.print(Text(f"  {chunk.get('node', '')}: {details}", style="dim"))


def _save_chart(png: bytes, where: Path | None) -> Path:
    """Write a chart's PNG to ``where`` (a file or a folder), or to a new chart*.png here."""
    folder = where if where is not None and where.is_dir() else None
    if where is not None and folder is None:
        path = where
    else:
        base = folder or Path(".")
        path, n = base / "chart.png", 2
        while path.exists():
            path, n = base / f"chart-{n}.png", n + 1
    try:
        path.write_bytes(png)
    except OSError as exc:
        raise ValueError(f"cannot save the chart to {str(path)!r}: {exc.strerror or exc}") from exc
    return path


def _print_chart(chart: Chart, path: Path) -> None:
    """Say where the chart went, and print the first rows of its data."""
    console.print(
        Text("Chart: ", style="bold")
        + Text(f"{path} ({chart.width} x {chart.height} px)")
        + Text(f" {chart.title!r}" if chart.title else "")
    )
    for note in chart.notes:
        console.print(f"[dim]{note}[/dim]")
    data = chart.data
    if data is None or not data.rows:
        return
    table = RichTable(*data.columns, title=f"Chart data ({data.n_rows} rows)", title_justify="left")
    for row in data.rows[:10]:
        table.add_row(*("" if v is None else str(v) for v in row))
    console.print(table)
    if data.n_rows > 10:
        console.print(f"[dim]... {data.n_rows - 10} more rows[/dim]")


def _print_answer(result: TableQAResult) -> None:
    """Print an answer with its tables, cited cells and costs."""
    answer = result.answer
    console.print(Text("Tables: ", style="bold") + Text(", ".join(answer.table_ids)))
    if result.retrieved:
        console.print("[dim]large table: solved with retrieved schema and cells[/dim]")
    console.print(Text("Answer: ", style="bold") + Text(answer.text or "(none)"))
    if answer.sentence and answer.sentence != answer.text:
        console.print(Text(answer.sentence))
    if answer.error:
        err_console.print(Text("solver error: ", style="yellow") + Text(answer.error))
    cells = answer.cited_cells[:10]
    if cells:
        console.print("[bold]Cited cells:[/bold]")
        for cell in cells:
            console.print(Text(f"  {cell.table} row {cell.row}, {cell.column!r}: {cell.value}"))
    console.print(
        f"[dim]{answer.solver}: confidence {answer.confidence:.2f}, {result.input_tokens} prompt + "
        f"{result.output_tokens} completion tokens, {result.seconds:.1f}s[/dim]"
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
