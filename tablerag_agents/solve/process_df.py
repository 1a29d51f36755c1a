"""process_df solver (de Souza et al., TableRAG): one `process_df(df)`, run in the sandbox."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

import pandas as pd
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable

from tablerag_agents.models.calls import LLMReply, call_model, retry_model
from tablerag_agents.models.sampling import sample_replies
from tablerag_agents.prompts import load_prompt
from tablerag_agents.sandbox import ExecResult, Sandbox
from tablerag_agents.solve.answer import answer_column_items, majority_index, value_to_items
from tablerag_agents.solve.base import SolverContext, SolverResult, Vote, as_context
from tablerag_agents.solve.grounding import grounded_code, literal_hint, looks_empty, swaps_note
from tablerag_agents.solve.hints import error_hint
from tablerag_agents.solve.llm_calls import (
    QUIET,
    RunRecorder,
    answer_from_result,
    observation_text,
)
from tablerag_agents.solve.parsing import extract_code, fenced_blocks
from tablerag_agents.solve.preview import (
    DEFAULT_FULL_TABLE_TOKENS,
    python_solver_tables,
    user_prompt,
)
from tablerag_agents.solve.question_kind import for_question, missed_kind
from tablerag_agents.solve.quoting import fix_python_apostrophes
from tablerag_agents.tables.typed_table import TypedTable

logger = logging.getLogger(__name__)

REPEATED = "(the same code as the failed one: not run again)"
_DEF = re.compile(r"^def\s+process_df\s*\(", re.M)


def extract_function(text: str) -> str | None:
    """Return the code defining ``process_df`` (or any Python code) from a reply."""
    for _, body in fenced_blocks(text):
        if _DEF.search(body):
            return body
    m = _DEF.search(text)
    if m:  # unfenced: take the definition and the indented lines after it
        lines = text[m.start() :].splitlines()
        kept = [lines[0]]
        for line in lines[1:]:
            if line.strip() and not line.startswith((" ", "\t")):
                break
            kept.append(line)
        return "\n".join(kept).rstrip()
    return extract_code(text, "python")


def program(code: str) -> str:
    """The cell to run: the function, then its call on a copy of ``df``."""
    if _DEF.search(code):
        return f"{QUIET}\n{code}\n\nprocess_df(df.copy())"
    return f"{QUIET}\n{code}"  # a plain script: its last expression is the answer


@dataclass
class Attempt:
    """One generated function and what running it gave."""

    code: str
    result: ExecResult | None

    @property
    def ok(self) -> bool:
        """True if the code ran without an exception."""
        return self.result is not None and self.result.ok

    @property
    def empty(self) -> bool:
        """True if the code ran but returned an empty, NaN or 0 value."""
        value = self.result.value if self.result is not None else None
        return self.ok and value is not None and looks_empty(value)


def wrong_kind_of(question: str, attempt: Attempt) -> str | None:
    """The shape of answer ``question`` asks for (yes/no, one of its options) that the
    attempt's value misses (:func:`~.question_kind.missed_kind`), or None."""
    if attempt.result is None:
        return None
    return missed_kind(question, value_to_items(attempt.result.value) or [])


class ProcessDfSolver:
    """One-shot code generation: ``process_df(df)`` returns the answer.

    Args:
        model: Chat model writing the function.
        sandbox: Where it runs (a fresh namespace per run).
        repair: After an exception, show the error and let the model fix it once.
        head_rows: Rows shown in the prompt when the whole table does not fit.
        full_table_tokens: Show every row when the table fits in this many tokens.
        clean: Convert number-like text columns to numbers first.
        exec_timeout_s: Time limit of one run.
        retry_temperature: Sampling temperature of the repair call (None: the model's).
        samples: Functions per question; above 1, ``samples - 1`` more are sampled
            at ``sample_temperature`` and the answers are decided by majority vote
            (self-consistency).
        sample_temperature: Temperature of those extra samples.
        explain_model: If set, writes the answer sentence (one more call).
        typed_columns: Give the code parsed companion columns (``df['Population__num']``,
            ``df['Time__sec']``...), flagged total rows and turned transposed tables
            (:mod:`~tablerag_agents.solve.typed_frames`). Off by default: no measured
            gain on WTQ dev.
        row_numbers: Give every table a ``row_no`` column (1 = first row) that the
            prompt names for questions about order. Off by default: no measured gain on
            WTQ dev (``bench/results/error_analysis_dev.md``).
        ground_literals: When the model's fix still fails, rerun the first code with
            each literal that matches no cell but lies inside exactly one cell replaced
            by that cell (:func:`~tablerag_agents.solve.grounding.grounded_code`). Off
            by default: measured on 30 WTQ dev questions it changed accuracy by -0.033
            [-0.167, +0.067] (no gain).
    """

    name = "process_df"

    def __init__(
        self,
        model: Runnable[Any, Any],
        sandbox: Sandbox,
        *,
        repair: bool = True,
        head_rows: int = 8,
        full_table_tokens: int = DEFAULT_FULL_TABLE_TOKENS,
        clean: bool = True,
        exec_timeout_s: float = 10.0,
        retry_temperature: float | None = 0.6,
        samples: int = 1,
        sample_temperature: float = 0.7,
        explain_model: BaseChatModel | None = None,
        ground_literals: bool = False,
        typed_columns: bool = False,
        row_numbers: bool = False,
    ) -> None:
        """Store the model, sandbox and options."""
        self.model = model
        self.sandbox = sandbox
        self.repair = repair
        self.head_rows = head_rows
        self.full_table_tokens = full_table_tokens
        self.clean = clean
        self.exec_timeout_s = exec_timeout_s
        self.retry_temperature = retry_temperature
        if samples < 1:
            raise ValueError(f"samples must be >= 1, got {samples}")
        self.samples = samples
        self.sample_temperature = sample_temperature
        self.explain_model = explain_model
        self.ground_literals = ground_literals
        self.typed_columns = typed_columns
        self.row_numbers = row_numbers

    def _messages(
        self,
        ctx: SolverContext,
        tables: dict[str, pd.DataFrame],
        views: dict[str, TypedTable] | None = None,
    ) -> list[BaseMessage]:
        user = user_prompt(
            "process_df_user",
            ctx,
            tables,
            head_rows=self.head_rows,
            full_table_tokens=self.full_table_tokens,
            views=views,
        )
        system = for_question(load_prompt("process_df_system"), ctx.question)
        return [SystemMessage(system), HumanMessage(user)]

    def _run(self, rec: RunRecorder, reply: LLMReply, tables: dict[str, pd.DataFrame]) -> Attempt:
        """Extract the function from ``reply``, run it, and record the step."""
        code = extract_function(reply.text) or ""
        code = fix_python_apostrophes(code) or code
        if not code:
            rec.add(reply, action="none", observation="no code in the reply", ok=False)
            return Attempt(code, None)
        return self._execute(rec, reply, code, tables)

    def _execute(
        self,
        rec: RunRecorder,
        reply: LLMReply | None,
        code: str,
        tables: dict[str, pd.DataFrame],
        thought: str = "",
    ) -> Attempt:
        """Run ``code`` in the sandbox and record the step."""
        result = self.sandbox.run(program(code), tables, timeout=self.exec_timeout_s)
        rec.add(
            reply,
            action="python",
            thought=thought,
            code=code,
            observation=observation_text(result),
            ok=result.ok,
            exec_seconds=result.duration_s,
        )
        return Attempt(code, result)

    def _grounded(
        self, rec: RunRecorder, attempt: Attempt, tables: dict[str, pd.DataFrame]
    ) -> Attempt | None:
        """Rerun ``attempt`` with its unmatched literals replaced by the one cell holding
        each (no model call); the new attempt if it gives a non-empty value, else None."""
        grounded = grounded_code(attempt.code, tables, "python")
        if grounded is None:
            return None
        code, swaps = grounded
        fixed = self._execute(rec, None, code, tables, thought=swaps_note(swaps))
        return fixed if fixed.ok and not fixed.empty else None

    def solve(self, question: str | SolverContext, df: pd.DataFrame | None = None) -> SolverResult:
        """Answer ``question`` over ``df`` (or the tables of a :class:`SolverContext`)."""
        ctx = as_context(question, df)
        tables, views, named_views = python_solver_tables(
            ctx, clean=self.clean, typed_columns=self.typed_columns, row_numbers=self.row_numbers
        )
        rec = RunRecorder(self.name, ctx, views=views)
        messages = self._messages(ctx, tables, named_views)
        first = self._run(rec, call_model(self.model, messages), tables)
        if self.repair:
            first = self._repair(rec, messages, first, tables)
        iterations = len(rec.steps)
        attempts = [first]
        if self.samples > 1:
            replies = sample_replies(
                self.model, messages, self.samples - 1, self.sample_temperature
            )
            attempts += [self._run(rec, reply, tables) for reply in replies]
            iterations = len(rec.steps)
        if not any(a.ok for a in attempts):
            error = (
                "no code produced"
                if first.result is None
                else f"code failed: {first.result.error_type}"
            )
            return rec.finish(None, code=first.code, error=error, iterations=iterations)
        best, items, votes = self._vote(rec, attempts)
        result = rec.finish(
            items,
            value=best.result.value if best.result else None,
            code=best.code,
            iterations=iterations,
            explain_model=self.explain_model,
        )
        if self.samples > 1:
            result.votes = votes
        return result

    def _repair(
        self,
        rec: RunRecorder,
        messages: list[BaseMessage],
        first: Attempt,
        tables: dict[str, pd.DataFrame],
    ) -> Attempt:
        """Let the model fix an error, an empty/0 result a mismatched literal explains, or a
        value given to a yes/no question.

        Returns the attempt to keep (the first one if the fix is no better).
        """
        suspicious = first.empty
        wrong_kind = (
            wrong_kind_of(rec.context.question, first) if first.ok and not suspicious else None
        )
        if first.ok and not suspicious and not wrong_kind:
            return first
        grounding = literal_hint(first.code, tables, "python") if first.code else None
        if suspicious and grounding is None:
            return first  # a 0 or empty answer nothing argues against
        if first.result is None:
            prompt = load_prompt("process_df_repair").format(error="no ```python block")
        elif wrong_kind:
            prompt = load_prompt(f"process_df_{wrong_kind}").format(
                result=observation_text(first.result, 400)
            )
        elif suspicious:
            prompt = load_prompt("process_df_suspicious").format(
                result=observation_text(first.result, 400), hint=grounding
            )
        else:
            error = observation_text(first.result, 800)
            columns = [str(c) for frame in tables.values() for c in frame.columns]
            hints = (error_hint(first.result.error or "", first.code, columns), grounding)
            error = "\n".join([error, *(h for h in hints if h)])
            prompt = load_prompt("process_df_repair").format(error=error)
        follow = [AIMessage(rec.steps[-1].raw), HumanMessage(prompt)]
        # Greedy decoding tends to repeat the failed code: sample the repair.
        reply = call_model(retry_model(self.model, self.retry_temperature), messages + follow)
        second: Attempt | None = None
        if (extract_function(reply.text) or "").strip() == first.code.strip():
            rec.add(reply, action="python", code=first.code, observation=REPEATED, ok=False)
        else:
            second = self._run(rec, reply, tables)
        if wrong_kind:
            if second is not None and second.ok and not wrong_kind_of(rec.context.question, second):
                return second
            return first
        failed = second is None or not second.ok or second.empty
        if failed and grounding is not None and self.ground_literals:
            # The model did not use the hint: match the literals to their cells itself.
            fixed = self._grounded(rec, first, tables)
            if fixed is not None:
                return fixed
        if second is None or (suspicious and (not second.ok or second.empty)):
            return first
        return second

    def _vote(
        self, rec: RunRecorder, attempts: list[Attempt]
    ) -> tuple[Attempt, list[str] | None, list[Vote]]:
        """Majority vote over the answers of the successful runs (first run wins ties,
        real answers outvote empty or 0 ones). Returns the chosen run, its answer
        and the votes of all runs that gave one.

        A result that is not answer-shaped (e.g. a wide table) is read by the
        model, but only for the first successful run, to bound the cost.
        """
        ctx = rec.context
        columns = [str(c) for frame in ctx.tables.values() for c in frame.columns]
        answered: list[tuple[Attempt, list[str]]] = []
        for attempt in attempts:
            if not attempt.ok or attempt.result is None:
                continue
            value = attempt.result.value
            items = answer_column_items(value, ctx.question, columns) or value_to_items(value)
            if items is None and not answered and attempt is attempts[0]:
                if attempt.result.value is not None or attempt.result.value_repr:
                    items = answer_from_result(self.model, rec, observation_text(attempt.result))
            if items:
                answered.append((attempt, items))
        answers = [items for _, items in answered]
        votes = [Vote(source=self.name, items=items, code=a.code) for a, items in answered]
        best = majority_index(answers)
        if best is None:
            return next(a for a in attempts if a.ok), None, votes
        return (*answered[best], votes)
