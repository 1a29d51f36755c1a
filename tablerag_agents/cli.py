"""The `tablerag` command line: index tables, search them, ask questions.

Thin over the engine: every command parses options, calls one engine function,
and prints the result (or a one-line error with a non-zero exit code).
"""

from __future__ import annotations

import json
import logging
import sys
import warnings
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

import typer
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from tablerag_agents.config import Settings
from tablerag_agents.errors import TableRAGError

if TYPE_CHECKING:
    from tablerag_agents.qa import SolverName

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

SOLVERS = ("pyreact", "sql", "process_df", "read_table", "fallback", "vote")


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


@app.command()
@_friendly_errors
def index(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Table files (csv, tsv, xlsx, parquet, json, sqlite, duckdb) or folders, "
            "or an OTT-QA style tables.json with --ottqa."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Index directory to create/extend.")],
    ottqa: Annotated[
        bool, typer.Option(help="Read PATHS as OTT-QA corpus JSON ({id: table}).")
    ] = False,
    rebuild: Annotated[bool, typer.Option(help="Delete an existing index first.")] = False,
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = True,
) -> None:
    """Index tables into a directory for `search` and `ask` (adds to an existing index)."""
    from tablerag_agents.indexing import index_tables

    stats = index_tables(
        paths, out, settings=Settings(), ottqa=ottqa, rebuild=rebuild, progress=progress
    )
    console.print(
        f"indexed {stats['added']} tables into {out} "
        f"({stats['total']} in the index, {stats['skipped']} skipped, {stats['seconds']:.1f}s)"
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
) -> None:
    """Rank the indexed tables for a question."""
    from tablerag_agents.indexing import search_tables

    hits = search_tables(
        question, index_dir, settings=Settings(), k=k, method=method, rerank=rerank
    )
    if as_json:
        typer.echo(json.dumps(hits, indent=2, ensure_ascii=False))
        return
    table = RichTable("rank", "table id", "score", "caption")
    for rank, hit in enumerate(hits, 1):
        table.add_row(str(rank), hit["table_id"], f"{hit['score']:.4f}", hit.get("caption", ""))
    console.print(table)


@app.command()
@_friendly_errors
def ask(
    question: Annotated[str, typer.Argument(help="The question to answer.")],
    table_path: Annotated[
        Path | None, typer.Option("--table", "-t", help="Answer over this table file.")
    ] = None,
    index_dir: Annotated[
        Path | None,
        typer.Option("--index", "-i", help="Answer over the best table of this index."),
    ] = None,
    solver: Annotated[str, typer.Option(help=f"How to answer: {', '.join(SOLVERS)}.")] = "pyreact",
    as_json: Annotated[bool, typer.Option("--json", help="Print the full result as JSON.")] = False,
) -> None:
    """Answer a question over a table file or the best table of an index."""
    from tablerag_agents.qa import answer_question

    if (table_path is None) == (index_dir is None):
        raise ValueError("give exactly one of --table FILE or --index DIR")
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r}; choose from {', '.join(SOLVERS)}")
    result = answer_question(
        question,
        table_path=table_path,
        index_dir=index_dir,
        solver=cast("SolverName", solver),
        settings=Settings(),
    )
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    _print_answer(result)


@app.command()
@_friendly_errors
def demo(
    question: Annotated[
        str, typer.Option(help="Question over the bundled sample tables.")
    ] = "How many more passengers flew to Los Angeles than to Saskatoon from Manzanillo airport?",
    out: Annotated[
        Path | None, typer.Option(help="Where to put the demo index (default: the cache dir).")
    ] = None,
) -> None:
    """Index the bundled sample tables, find the right one and answer with the local model."""
    from tablerag_agents.qa import run_demo

    settings = Settings()
    result = run_demo(question, settings=settings, index_dir=out, echo=console.print)
    _print_answer(result)


@app.command()
def info() -> None:
    """Show the effective settings (no secrets) and where they come from."""
    settings = Settings()
    console.print_json(json.dumps(settings.public_dict(), default=str))
    console.print(
        "Set TABLERAG_<FIELD> environment variables or write tablerag.toml "
        "(or point TABLERAG_CONFIG at a TOML file) to change them."
    )


def _print_answer(ask_result: Any) -> None:
    result = ask_result.result
    console.print(Text("Table: ", style="bold") + Text(ask_result.table_id))
    if ask_result.retrieved_context:
        console.print("[dim]large table: solved with retrieved schema and cells[/dim]")
    console.print(Text("Answer: ", style="bold") + Text(result.answer or "(none)"))
    if result.explanation:
        console.print(Text(result.explanation))
    if result.error:
        err_console.print(Text("solver error: ", style="yellow") + Text(result.error))
    cells = result.provenance.cells[:10]
    if cells:
        console.print("[bold]Cited cells:[/bold]")
        for cell in cells:
            console.print(Text(f"  {cell.table} row {cell.row}, {cell.column!r}: {cell.value}"))
    console.print(
        f"[dim]{result.solver}: {result.iterations} steps, {result.input_tokens} prompt + "
        f"{result.output_tokens} completion tokens, {result.seconds:.1f}s[/dim]"
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())
