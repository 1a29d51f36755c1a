"""SQL solver (de Souza et al., TableRAG): one model-written query, run in a locked DuckDB."""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from typing import Any

import pandas as pd
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from tablerag_agents.models.calls import LLMReply, call_model, retry_model
from tablerag_agents.models.sampling import sample_replies
from tablerag_agents.prompts import load_prompt
from tablerag_agents.solve.answer import answer_column_items, majority_index, value_to_items
from tablerag_agents.solve.base import SolverContext, SolverResult, Vote, as_context
from tablerag_agents.solve.column_pick import (
    PICK_MIN_COLUMNS,
    narrow,
    parse_picked,
    pick_candidates,
    pick_prompt,
)
from tablerag_agents.solve.condition_hints import condition_hints
from tablerag_agents.solve.grounding import (
    grounded_code,
    literal_hint,
    looks_empty,
    swaps_note,
    unasked_number_filters,
)
from tablerag_agents.solve.hints import error_hint
from tablerag_agents.solve.llm_calls import RunRecorder, answer_from_result
from tablerag_agents.solve.normalize import answer_key
from tablerag_agents.solve.parsing import extract_code
from tablerag_agents.solve.preview import (
    DEFAULT_FULL_TABLE_TOKENS,
    solver_tables,
    user_prompt,
)
from tablerag_agents.solve.question_kind import for_question, missed_kind
from tablerag_agents.solve.quoting import fix_sql_apostrophes
from tablerag_agents.solve.sql_engine import SafeDuckDB, SourceSQL, SQLResult, sql_column_names
from tablerag_agents.solve.sql_missing_columns import repair_missing_column_filter
from tablerag_agents.solve.sql_repair import (
    add_missing_from,
    cast_dirty_numbers,
    cast_text_numbers,
    empty_identifiers_as_text,
    fix_column_names,
    group_bare_columns,
    quote_bare_columns,
    quote_literals,
)
from tablerag_agents.solve.table_example import example_block
from tablerag_agents.tables.typed_table import TypedTable

logger = logging.getLogger(__name__)

MAIN_SQL_TABLE = "t"
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
REPEATED = "(the same query as before: not run again)"


def _sql_table_name(table_id: str, taken: set[str]) -> str:
    """A plain SQL name for a table id (``"staff#2"`` -> ``staff_2``); the id stays an alias."""
    if _PLAIN_NAME.fullmatch(table_id):
        return table_id
    base = re.sub(r"\W+", "_", table_id).strip("_") or "table"
    base = base if base[0].isalpha() else f"t_{base}"
    name, n = base, 2
    while name in taken or name == MAIN_SQL_TABLE:
        name, n = f"{base}_{n}", n + 1
    return name


def _sample_note(ctx: SolverContext) -> SolverContext:
    """``ctx`` telling the model that a sourced main table's rows are only a sample."""
    source = ctx.sources.get(ctx.main_id)
    if source is None:
        return ctx
    note = (
        f"`{MAIN_SQL_TABLE}` has {source.n_rows():,} rows (it stays in its database or file); "
        f"the rows shown are only its first {len(ctx.main_df)}: compute over all rows with SQL."
    )
    return replace(ctx, schema_text=f"{note}\n{ctx.schema_text or ''}".strip())


def extract_sql(text: str) -> str | None:
    """Return the SQL in a reply: a ```sql block, an untagged block, or a bare SELECT."""
    code = extract_code(text, "sql")
    if code:
        return code
    lowered = text.lower()
    for kw in ("with ", "select "):
        pos = lowered.find(kw)
        if pos >= 0:
            return text[pos:].strip().split("\n\n")[0].strip()
    return None


class SQLSolver:
    """Answer a question with one SQL query, retried with the error on failure.

    Args:
        model: Chat model writing the SQL.
        max_retries: Extra attempts after a failed (or empty) query.
        retry_on_empty: Treat an empty result as a failure worth one more try.
        head_rows: Rows shown in the prompt when the whole table does not fit.
        full_table_tokens: Show every row when the table fits in this many tokens.
        clean: Convert number-like text columns to numbers first.
        timeout_s: Per-query time limit.
        retry_temperature: Sampling temperature of the retries (None: the model's).
        samples: Queries per question; above 1, ``samples - 1`` more are sampled at
            ``sample_temperature``, all are run, and the answers are decided by
            majority vote (execution-guided self-consistency); the answer's
            confidence is the share of the ``samples`` queries that gave it.
        sample_temperature: Temperature of those extra samples.
        explain_model: If set, writes the answer sentence (one more call).
        ground_literals: When no query returned rows, rerun the last one with each
            literal that matches no cell but lies inside exactly one cell replaced by
            that cell (:func:`~tablerag_agents.solve.grounding.grounded_code`). Off by
            default: measured on 30 WTQ dev questions it changed accuracy by -0.033
            [-0.167, +0.067] (no gain).
        typed_columns: Give the query parsed companion columns (``"Population__num"``,
            ``"Time__sec"``...), flagged total rows and turned transposed tables
            (:mod:`~tablerag_agents.solve.typed_frames`). Off by default: no measured
            gain on WTQ dev.
        row_numbers: Give every table a ``"row_no"`` column (1 = first row) that the
            prompt names for questions about order. Off by default: no measured gain on
            WTQ dev (``bench/results/error_analysis_dev.md``).
        filter_hints: When a query returns nothing (no rows, or one 0/NULL), also name
            its text conditions that no cell of their column meets, or that the
            question never mentions, in the retry prompt
            (:func:`~tablerag_agents.solve.condition_hints.condition_hints`). Off by
            default: no measured gain on WTQ dev.
        table_example: Write the system prompt's example over this table's own columns
            and values (:mod:`~tablerag_agents.solve.table_example`) instead of a fixed
            one the model may copy. Off until measured.
        pick_columns: First ask the model which columns the question needs (one short
            call, :mod:`~tablerag_agents.solve.column_pick`), then show only those in
            the query prompt (the database keeps them all). Tables with fewer than
            ``PICK_MIN_COLUMNS`` columns are shown whole. Off by default: no measured gain
            on WTQ dev, and three times the failed queries.
        several_rows: When a query's answer has several items, ask once whether the
            question wants one (then the query misses a condition or a ``LIMIT 1``);
            the model repeats the query to keep them all. Off by default: no measured gain
            on WTQ dev.
    """

    name = "sql"

    def __init__(
        self,
        model: BaseChatModel,
        *,
        max_retries: int = 2,
        retry_on_empty: bool = True,
        head_rows: int = 8,
        full_table_tokens: int = DEFAULT_FULL_TABLE_TOKENS,
        clean: bool = True,
        timeout_s: float = 5.0,
        retry_temperature: float | None = 0.6,
        samples: int = 1,
        sample_temperature: float = 0.7,
        explain_model: BaseChatModel | None = None,
        ground_literals: bool = False,
        typed_columns: bool = False,
        row_numbers: bool = False,
        filter_hints: bool = False,
        table_example: bool = False,
        pick_columns: bool = False,
        several_rows: bool = False,
    ) -> None:
        """Store the model and options."""
        self.model = model
        self.max_retries = max_retries
        self.retry_on_empty = retry_on_empty
        self.head_rows = head_rows
        self.full_table_tokens = full_table_tokens
        self.clean = clean
        self.timeout_s = timeout_s
        self.retry_temperature = retry_temperature
        if samples < 1:
            raise ValueError(f"samples must be >= 1, got {samples}")
        self.samples = samples
        self.sample_temperature = sample_temperature
        self.explain_model = explain_model
        self.ground_literals = ground_literals
        self.typed_columns = typed_columns
        self.row_numbers = row_numbers
        self.filter_hints = filter_hints
        self.table_example = table_example
        self.pick_columns = pick_columns
        self.several_rows = several_rows

    def _engine(
        self, ctx: SolverContext
    ) -> tuple[SafeDuckDB | SourceSQL, dict[str, pd.DataFrame], dict[str, TypedTable]]:
        """The database, its tables by SQL name, and their typed views by table id.

        A main table with a source (a database table, a file scanned out of core)
        is queried where it lives, under ``t`` and its id; its sample is what the
        prompt shows (no cleaning or typed columns: the query sees the source's
        own columns).
        """
        source = ctx.sources.get(ctx.main_id)
        if source is not None:
            if len(ctx.tables) > 1:
                raise ValueError(
                    f"table {ctx.main_id!r} lives in {source.label}: query it alone, "
                    "not joined with other tables"
                )
            engine = SourceSQL(source, [MAIN_SQL_TABLE, ctx.main_id], timeout_s=self.timeout_s)
            return engine, {MAIN_SQL_TABLE: ctx.main_df}, {}
        frames, views = solver_tables(
            ctx.tables,
            clean=self.clean,
            typed_columns=self.typed_columns,
            row_numbers=self.row_numbers,
        )
        tables: dict[str, pd.DataFrame] = {}
        aliases: dict[str, str] = {}
        for i, (tid, frame) in enumerate(frames.items()):
            frame = frame.copy()
            frame.columns = sql_column_names(list(frame.columns))
            name = MAIN_SQL_TABLE if i == 0 else _sql_table_name(tid, set(tables) | set(frames))
            tables[name] = frame
            if name != tid:
                aliases[tid] = name
        return SafeDuckDB(tables, timeout_s=self.timeout_s, aliases=aliases), tables, views

    def _prompt(
        self,
        ctx: SolverContext,
        tables: dict[str, pd.DataFrame],
        views: dict[str, TypedTable],
    ) -> list[BaseMessage]:
        names = dict(zip(ctx.tables, tables, strict=True))  # table id -> SQL name
        user = user_prompt(
            "sql_user",
            ctx,
            tables,
            head_rows=self.head_rows,
            quote='"',
            full_table_tokens=self.full_table_tokens,
            views={names[tid]: view for tid, view in views.items()},
        )
        system = for_question(load_prompt("sql_system"), ctx.question)
        example = example_block(tables[MAIN_SQL_TABLE]) if self.table_example else None
        if example is not None:
            system = system.split("\nExample\n", 1)[0].rstrip() + "\n\n" + example + "\n"
        return [SystemMessage(system), HumanMessage(user)]

    def solve(self, question: str | SolverContext, df: pd.DataFrame | None = None) -> SolverResult:
        """Answer ``question`` over ``df`` (or the tables of a :class:`SolverContext`)."""
        ctx = as_context(question, df)
        engine, tables, views = self._engine(ctx)
        rec = RunRecorder(self.name, ctx, views=views)
        shown = self._picked(rec, ctx, tables, views) if self.pick_columns else tables
        prompt = self._prompt(_sample_note(ctx), shown, views)
        messages = list(prompt)
        last: SQLResult | None = None
        sql = ""
        # The last result with rows: a failed retry of a suspicious 0 must not lose it.
        kept: tuple[SQLResult, str] | None = None
        tried: set[str] = set()
        nudged = False
        columns = [str(c) for frame in tables.values() for c in frame.columns]
        asked_yes_no = False  # a yes/no (or choice) question answered by a value: asked once
        asked_several = False  # an answer of several items: asked once if one was meant
        for attempt in range(self.max_retries + 1):
            # Greedy decoding tends to repeat the failed query: sample the retries.
            model = self.model if attempt == 0 else retry_model(self.model, self.retry_temperature)
            reply = call_model(model, messages)
            sql = extract_sql(reply.text) or ""
            if not sql:
                rec.add(reply, action="none", observation="no SQL found in the reply", ok=False)
                messages += [
                    AIMessage(reply.text),
                    HumanMessage("Write the query in a ```sql block."),
                ]
                continue
            key = " ".join(sql.split()).lower()
            if key in tried:
                # The model repeats itself; rerunning would only repeat the outcome.
                rec.add(
                    reply,
                    action="sql",
                    code=sql,
                    observation=REPEATED,
                    ok=last is not None and last.ok,
                )
                break
            tried.add(key)
            last, sql = self._run_step(rec, reply, engine, sql, tables)
            obs = last.observation()
            if last.ok and last.rows:
                kept = (last, sql)
            empty = not last.rows or (
                len(last.rows) == 1 and len(last.rows[0]) == 1 and looks_empty(last.rows[0][0])
            )
            failed = not last.ok or empty
            hint = literal_hint(sql, tables, "sql") if failed else None
            if not last.ok:
                known = error_hint(last.error or "", sql, columns)
                hint = f"{known}\n{hint}" if known and hint else known or hint
            if self.filter_hints and last.ok and empty:
                extra = condition_hints(sql, tables, ctx.question)
                hint = f"{hint}\n{extra}" if hint and extra else hint or extra
            unasked = (
                unasked_number_filters(sql, ctx.question)
                if last.ok and last.rows and not nudged and self.retry_on_empty
                else []
            )
            items = (self._items(ctx.question, last) or []) if last.ok else []
            wrong_kind = (
                missed_kind(ctx.question, items)
                if last.ok and last.rows and not asked_yes_no
                else None
            )
            several = (
                self.several_rows
                and last.ok
                and hint is None
                and not asked_several
                and len(items) > 1
            )
            if (
                last.ok
                and (not self.retry_on_empty or (last.rows and hint is None))
                and not unasked
                and not wrong_kind
                and not several
            ):
                break  # an answer, or a 0/NULL that no mismatched literal explains
            if attempt == self.max_retries:
                break
            if wrong_kind:
                asked_yes_no = True
                follow = load_prompt(f"sql_{wrong_kind}").format(result=obs)
            elif unasked:
                nudged = True  # asked once; the model may keep the condition
                follow = load_prompt("sql_unasked_filter").format(
                    result=obs, filters=" and ".join(unasked)
                )
            elif several:
                asked_several = True
                follow = load_prompt("sql_several_rows").format(n=len(last.rows), result=obs)
            elif not last.ok:
                follow = load_prompt("sql_retry").format(error=obs)
            elif last.rows:
                follow = load_prompt("sql_suspicious").format(result=obs)
            else:
                follow = load_prompt("sql_empty")
            follow = f"{follow}\n{hint}" if hint else follow
            messages += [AIMessage(reply.text), HumanMessage(follow)]
        if kept is None and sql and self.ground_literals:
            # The model never matched its literals to the cells: done here, if asked.
            kept = self._grounded(rec, engine, sql, tables)
        if kept is not None and (last is None or not last.ok or not last.rows):
            last, sql = kept
        if self.samples == 1:
            return self._finish(rec, last, sql)
        return self._vote(rec, prompt, engine, tables, last, sql)

    def _picked(
        self,
        rec: RunRecorder,
        ctx: SolverContext,
        tables: dict[str, pd.DataFrame],
        views: dict[str, TypedTable],
    ) -> dict[str, pd.DataFrame]:
        """``tables`` with the main one narrowed to the columns the model picks for the
        question (a trace step records them); unchanged for narrow tables."""
        main = tables[MAIN_SQL_TABLE]
        view = views.get(ctx.main_id)
        candidates = pick_candidates(main, view)
        if len(candidates) < PICK_MIN_COLUMNS:
            return tables
        reply = call_model(self.model, [HumanMessage(pick_prompt(main, candidates, ctx.question))])
        picked = parse_picked(reply.text, candidates)
        shown = narrow(main, picked, view)
        named = ", ".join(f'"{c}"' for c in picked) or "none it knows"
        shown_note = f"{len(shown.columns)} of {len(main.columns)} shown"
        note = "all shown" if shown is main else shown_note
        rec.add(reply, action="none", thought=f"columns picked: {named} ({note})")
        return {**tables, MAIN_SQL_TABLE: shown}

    def _vote(
        self,
        rec: RunRecorder,
        prompt: list[BaseMessage],
        engine: SafeDuckDB | SourceSQL,
        tables: dict[str, pd.DataFrame],
        last: SQLResult | None,
        sql: str,
    ) -> SolverResult:
        """Sample more queries for the first prompt, run them, and keep the majority answer."""
        runs: list[tuple[SQLResult, str]] = [(last, sql)] if last is not None and last.ok else []
        replies = sample_replies(self.model, prompt, self.samples - 1, self.sample_temperature)
        for reply in replies:
            query = extract_sql(reply.text)
            if not query:
                rec.add(reply, action="none", observation="no SQL found in the reply", ok=False)
                continue
            result, query = self._run_step(rec, reply, engine, query, tables)
            if result.ok:
                runs.append((result, query))
        answers = [self._items(rec.context.question, r) or [] for r, _ in runs]
        best = majority_index(answers)
        chosen = self._finish(rec, last, sql) if best is None else self._finish(rec, *runs[best])
        chosen.votes = [
            Vote(source=self.name, items=a, code=q)
            for a, (_, q) in zip(answers, runs, strict=True)
            if a
        ]
        if best is not None and chosen.ok:
            # Agreement over every query asked for, failed ones included.
            key = answer_key(answers[best])
            chosen.confidence = sum(1 for a in answers if a and answer_key(a) == key) / self.samples
        return chosen

    @staticmethod
    def _items(question: str, result: SQLResult) -> list[str] | None:
        """The answer items of a result with rows (None if it is not answer-shaped)."""
        if not result.rows:
            return None
        frame = result.frame()
        return answer_column_items(frame, question) or value_to_items(frame)

    def _run_step(
        self,
        rec: RunRecorder,
        reply: LLMReply,
        engine: SafeDuckDB | SourceSQL,
        sql: str,
        tables: dict[str, pd.DataFrame],
    ) -> tuple[SQLResult, str]:
        """Run the query of ``reply`` (with repairs) and record it as a trace step."""
        result, sql = self._run(engine, sql, tables)
        rec.add(
            reply,
            action="sql",
            code=sql,
            observation=result.observation(),
            ok=result.ok,
            exec_seconds=result.seconds,
        )
        return result, sql

    def _grounded(
        self,
        rec: RunRecorder,
        engine: SafeDuckDB | SourceSQL,
        sql: str,
        tables: dict[str, pd.DataFrame],
    ) -> tuple[SQLResult, str] | None:
        """Rerun ``sql`` with its unmatched literals replaced by the one cell holding each
        (no model call); the result and query if it returns rows, else None."""
        grounded = grounded_code(sql, tables, "sql")
        if grounded is None:
            return None
        result, fixed = self._run(engine, grounded[0], tables)
        rec.add(
            None,
            action="sql",
            thought=swaps_note(grounded[1]),
            code=fixed,
            observation=result.observation(),
            ok=result.ok,
            exec_seconds=result.seconds,
        )
        return (result, fixed) if result.ok and result.rows else None

    def _run(
        self, engine: SafeDuckDB | SourceSQL, sql: str, tables: dict[str, pd.DataFrame]
    ) -> tuple[SQLResult, str]:
        """Run ``sql``, fixing double-quoted string values DuckDB took for columns,
        near-miss column names, filters on a column an in-memory table lacks (moved
        to the one column holding their values, or dropped when no cell resembles them),
        arithmetic on number-like text columns, a missing ``FROM``, plain columns
        beside aggregates (read as SQLite reads them), casts of number-like text
        columns, ``""`` for an empty string, column names with spaces left unquoted
        and unescaped apostrophes in string literals.

        Returns:
            The result and the SQL that produced it (fixed or not).
        """
        columns = {str(c) for frame in tables.values() for c in frame.columns}
        text_columns = {
            str(c)
            for frame in tables.values()
            for c in frame.columns
            if not pd.api.types.is_numeric_dtype(frame[c])
        }
        known = columns | set(tables)
        # A source's frame is a sample: its cells cannot tell which column holds a value.
        in_memory = isinstance(engine, SafeDuckDB)
        result = engine.run(sql)
        current = sql
        for _ in range(5):
            if result.ok or result.error is None:
                break
            # Only columns are candidates for a misspelt column (never a table name).
            fixed = (
                quote_literals(current, result.error, known)
                or fix_column_names(current, result.error, columns)
                or (in_memory and repair_missing_column_filter(current, result.error, tables))
                or cast_text_numbers(current, result.error, text_columns)
                or add_missing_from(current, result.error, MAIN_SQL_TABLE)
                or group_bare_columns(current, result.error)
                or cast_dirty_numbers(current, result.error, text_columns)
                or empty_identifiers_as_text(current, result.error)
                or quote_bare_columns(current, result.error, columns)
            )
            if fixed is None and "syntax" in result.error.lower():
                fixed = fix_sql_apostrophes(current)
            if fixed is None:
                break
            current, result = fixed, engine.run(fixed)
        return result, current

    def _finish(self, rec: RunRecorder, last: SQLResult | None, sql: str) -> SolverResult:
        iterations = len(rec.steps)
        if last is None or not last.ok:
            error = "no SQL produced" if last is None else f"SQL failed: {last.error}"
            return rec.finish(None, code=sql, error=error, iterations=iterations)
        frame = last.frame()
        items = self._items(rec.context.question, last)
        if items is None and last.rows:
            items = answer_from_result(self.model, rec, last.observation())
        value: Any = frame
        return rec.finish(
            items, value=value, code=sql, iterations=iterations, explain_model=self.explain_model
        )
