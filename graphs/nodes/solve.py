"""The ``solve`` node: run the chosen solver over everything the earlier nodes found."""

from __future__ import annotations

from typing import Any

import pandas as pd
from langgraph.runtime import Runtime
from tablerag_agents.graphs.context import Context
from tablerag_agents.graphs.nodes._common import ResourcesGetter, context_of, progress
from tablerag_agents.graphs.nodes.retrieve import question_of
from tablerag_agents.graphs.state import State

from tablerag_agents.resources import Resources
from tablerag_agents.solve import (
    Solver,
    SolverContext,
    SolverResult,
    make_solver,
    needs_embeddings,
    needs_sandbox,
)
from tablerag_agents.solve.chart import CHART_SOLVER, ChartSolver
from tablerag_agents.solve.chart_request import asks_for_chart
from tablerag_agents.solve.confidence import run_confidence
from tablerag_agents.solve.second_opinion import SecondOpinionSolver


def next_solver(state: State, ctx: Context) -> str | None:
    """The solver to run now: the Context's, then each untried retry solver.

    A question that asks for a chart gets the chart solver alone (with ``charts`` on):
    the other solvers answer with a value, not a picture.
    """
    attempts = state.get("attempts") or []
    if ctx.charts and asks_for_chart(question_of(state)):
        return None if attempts else CHART_SOLVER
    if not attempts:
        return ctx.solver
    tried = {name for a in attempts for name in [a["solver"], *a.get("tried", [])]}
    tried |= {str(a["solver"]).split(":")[0] for a in attempts}
    return next((s for s in ctx.retry_solvers if s not in tried), None)


def solver_context(state: State, ctx: Context, resources: ResourcesGetter) -> SolverContext:
    """Assemble the solver's input from the turn's tables, retrieval, filter and notes."""
    tables = {}
    sources = {}
    main_caption = ""
    sub_table: pd.DataFrame | None = None
    retrieved = state.get("retrieved") or {}
    sub_tables = state.get("sub_tables") or {}
    for i, ref in enumerate(state.get("table_ids") or []):
        table = resources.table(ref, ctx)
        df = table.df
        kept = sub_tables.get(ref)
        if kept is not None and not kept.get("fallback"):
            part = df.iloc[kept["rows"]][[c for c in kept["columns"] if c in df.columns]]
            if ctx.filter_scope == "table":
                df = part
            elif i == 0:
                sub_table = part
        name = table.id if table.id not in tables else ref
        tables[name] = df
        if table.source is not None and df is table.df:
            # A database table or a big file: SQL runs there, not on the sample in df.
            sources[name] = table.source
        if i == 0:
            main_caption = table.caption
    if sources:
        # A table queried where it lives (a database, a big file) joins with nothing: the
        # solver gets it alone when it is the main table, and never as a second table.
        main = next(iter(tables))
        keep = [main] if main in sources else [n for n in tables if n not in sources]
        tables = {n: tables[n] for n in keep}
        sources = {n: s for n, s in sources.items() if n in tables}
    schema_text = "\n\n".join(retrieved.values()) or None
    notes = [state.get("clarifications") or ""]
    wiki = state.get("wiki")
    if wiki:
        notes.append(f"Background (Wikipedia, {wiki.get('title', '')}): {wiki.get('text', '')}")
    clarifications = "\n".join(n for n in notes if n.strip()) or None
    return SolverContext(
        question=question_of(state),
        tables=tables,
        caption=main_caption,
        schema_text=schema_text,
        sub_table=sub_table,
        clarifications=clarifications,
        table_format=ctx.table_format,
        sources=sources,
    )


def _solver(name: str, ctx: Context, res: Resources) -> Solver:
    """The solver called ``name``, over the shared model, sandbox and embeddings."""
    if name == CHART_SOLVER:
        return ChartSolver(res.chat_model, res.sandbox)
    solver = _plain_solver(name, ctx, res)
    if ctx.second_opinion:
        return SecondOpinionSolver(solver, _plain_solver(ctx.second_opinion_solver, ctx, res))
    return solver


def _plain_solver(name: str, ctx: Context, res: Resources) -> Solver:
    """The solver called ``name`` as the factory makes it."""
    return make_solver(
        name,
        res.chat_model,
        res.sandbox if needs_sandbox(name) else None,
        embeddings=res.embeddings if needs_embeddings(name) else None,
        ground_literals=ctx.ground_literals,
        vote_k=ctx.vote_k,
        typed_columns=ctx.typed_columns,
        row_numbers=ctx.row_numbers,
        filter_hints=ctx.filter_hints,
        table_example=ctx.table_example,
        pick_columns=ctx.pick_columns,
        several_rows=ctx.several_rows,
        sql_samples=ctx.sql_samples,
    )


def make_solve(resources: ResourcesGetter) -> Any:
    """Build the ``solve`` node."""

    def solve(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Run the next solver; its result (with trace and costs) joins the attempts."""
        ctx = context_of(runtime)
        res = resources()
        name = next_solver(state, ctx) or ctx.solver
        progress(runtime, "solve", step=name, tables=state.get("table_ids"))
        solver = _solver(name, ctx, res)
        attempts = state.get("attempts") or []
        given = solver_context(state, ctx, resources)
        result: SolverResult = solver.solve(given)
        # Earlier attempts exist only when they produced no value (see route_after_solve).
        result.confidence = run_confidence(result, given.tables, retried=bool(attempts))
        progress(
            runtime,
            "solve",
            step="done",
            solver=result.solver,
            answer=result.answer,
            confidence=round(result.confidence, 3),
        )
        return {"attempts": [*attempts, result.model_dump(mode="json")]}

    return solve
