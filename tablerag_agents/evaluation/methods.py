"""The methods the harness compares: each turns an example into a :class:`Prediction`.

* ``graph``: the TableRAG graph, its :class:`~tablerag_agents.graphs.Context`
  built from the settings (``solver``, ``budget``, ``filter``...); with
  ``index_dir`` set it searches that corpus instead of getting the gold table.
* every solver of :mod:`tablerag_agents.solve.factory` alone (``sql``,
  ``pyreact``, ``process_df``, ``read_table``, ``vote``; solvers in turn are
  the graph's ``retry_solvers``) and the reading baselines ``read_schema``,
  ``rand_row_sampling``, ``row_col_retrieval``;
* ``pandas_agent``: LangChain's pandas agent (runs model code in this process:
  see :data:`~tablerag_agents.evaluation.pandas_agent.PANDAS_AGENT_WARNING`).

This adapter knows the tasks, the library does not: a ``fact`` statement is
asked as a yes/no question and the reply mapped to ``"1"``/``"0"``; a
``freeform`` question gets the graph's answer sentence, a sentence prompt for
the reading methods, the solver's explanation for the code solvers. ``error``
is set when the method raised or any model-written code (Python or SQL) failed
on the way, whatever the final answer.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from pydantic import TypeAdapter, ValidationError

from tablerag_agents.evaluation.types import EvalExample, Prediction
from tablerag_agents.evaluation.wiki_redaction import hidden_answers, hide_answers_in
from tablerag_agents.graphs import TableQAResult
from tablerag_agents.graphs.context_overrides import (
    CONTEXT_KEYS,
    context_from_settings,
    parse_value,
)
from tablerag_agents.graphs.state import InputState
from tablerag_agents.prompts import load_prompt
from tablerag_agents.resources import Resources
from tablerag_agents.solve import SOLVER_NAMES, SolverContext, TraceStep, make_solver
from tablerag_agents.solve.baselines import make_reader
from tablerag_agents.solve.confidence import run_confidence
from tablerag_agents.solve.factory import needs_embeddings, needs_sandbox
from tablerag_agents.tables import Table
from tablerag_agents.tables.render import TableFormat

logger = logging.getLogger(__name__)

METHOD_NAMES: tuple[str, ...] = ("graph", *SOLVER_NAMES, "pandas_agent")
"""Every method name ``make_method`` accepts."""

_READERS = ("read_table", "read_schema", "rand_row_sampling", "row_col_retrieval")
_TABLE_SWITCHES: dict[str, Any] = {"typed_columns": bool, "row_numbers": bool}
_SQL_SWITCHES: dict[str, Any] = {
    "filter_hints": bool,
    "table_example": bool,
    "pick_columns": bool,
    "several_rows": bool,
}
_OPTIONS: dict[str, dict[str, Any]] = {
    "read_table": {"context_tokens": int},
    "read_schema": {"context_tokens": int, "examples": int},
    "rand_row_sampling": {"context_tokens": int, "budget": int, "seed": int},
    "row_col_retrieval": {"context_tokens": int, "budget": int, "top_k": int},
    "pandas_agent": {"max_iterations": int, "max_seconds": float, "head_rows": int},
    "sql": {"ground_literals": bool, "sql_samples": int, **_TABLE_SWITCHES, **_SQL_SWITCHES},
    "process_df": {"ground_literals": bool, **_TABLE_SWITCHES},
    "vote": {"ground_literals": bool, "vote_k": int, **_TABLE_SWITCHES, **_SQL_SWITCHES},
    "pyreact": dict(_TABLE_SWITCHES),
}
"""Settings each non-graph method reads, besides ``table_format`` (all solvers)."""
_ALL_KEYS = CONTEXT_KEYS | {k for opts in _OPTIONS.values() for k in opts} | {"table_format"}
_YES = {"yes", "true", "correct", "right", "entailed", "supported", "1"}
_NO = {"no", "false", "incorrect", "wrong", "refuted", "not", "0"}


class Method(Protocol):
    """Answers one benchmark example."""

    name: str

    def run(self, example: EvalExample) -> Prediction:
        """Answer ``example``; failures become ``error=True`` predictions."""
        ...


def make_method(name: str, resources: Resources, settings: dict[str, str]) -> Method:
    """Create the method ``name`` over shared ``resources``.

    Args:
        name: One of :data:`METHOD_NAMES`.
        resources: Chat model, embeddings, sandbox and caches.
        settings: Raw ``--set`` values (``key -> string``; JSON values parse).
            ``graph`` reads every :class:`~tablerag_agents.graphs.Context` field;
            the others read ``table_format`` and their options (``budget``,
            ``seed``, ``top_k``, ``examples``, ``context_tokens``,
            ``max_iterations``, ``max_seconds``, ``head_rows``, ``ground_literals``,
            ``vote_k``, ``typed_columns``, ``row_numbers``) and ignore the rest, so one
            set of settings can serve several methods.

    Raises:
        ValueError: An unknown method, a key no method knows, or a bad value.
    """
    if name not in METHOD_NAMES:
        raise ValueError(f"unknown method {name!r}; choose from {', '.join(METHOD_NAMES)}")
    unknown = sorted(set(settings) - _ALL_KEYS)
    if unknown:
        raise ValueError(f"unknown settings {unknown}; known: {sorted(_ALL_KEYS)}")
    if name == "graph":
        return GraphMethod(resources, settings)
    options = _options(settings, _OPTIONS.get(name, {}))
    if name == "pandas_agent":
        return PandasAgentMethod(resources, **options)
    table_format = _options(settings, {"table_format": TableFormat}).get("table_format")
    return SolverMethod(name, resources, options, table_format or "markdown")


class GraphMethod:
    """The TableRAG graph with a fixed :class:`Context`."""

    name = "graph"

    def __init__(self, resources: Resources, settings: Mapping[str, str]) -> None:
        """Build the context from the graph's settings and compile the graph."""
        from tablerag_agents.graphs import build_graph

        # The corpus is where the graph is built, not a run setting of its Context.
        self.index_dir = settings.get("index_dir")
        self.context = context_from_settings(
            {k: v for k, v in settings.items() if k in CONTEXT_KEYS and k != "index_dir"}
        )
        self.resources = resources
        if self.context.wikipedia:
            hide_answers_in(resources)  # the background never gives the answer away
        self.graph = build_graph(resources, index_dir=self.index_dir)
        # Sentence answers are written by the model unless a setting says otherwise.
        self.sentence_context = (
            self.context
            if "write_sentence" in settings
            else dataclasses.replace(self.context, write_sentence=True)
        )

    def run(self, example: EvalExample) -> Prediction:
        """Ask the graph (several tables go in as several tables)."""
        inputs: InputState = {"question": task_question(example)}
        started = time.perf_counter()
        try:
            if self.index_dir is None:
                inputs["tables"] = [self.resources.add_table(t) for t in example.load_tables()]
                started = time.perf_counter()
            context = self.sentence_context if example.task == "freeform" else self.context
            # Short answers only: a verdict ("1") or a gold sentence is not a fact to hide.
            with hidden_answers(example.answers if example.task == "qa" else ()):
                out = self.graph.invoke(inputs, context=context)
        except Exception as exc:  # noqa: BLE001 - the exception rate counts it
            return _raised(exc, started)
        result = TableQAResult.from_output(out)
        answer = result.answer
        failed = failed_code(result.solver_steps)
        return finish(
            example,
            list(answer.items),
            sentence=answer.sentence or answer.text,
            started=started,
            error=failed is not None,
            error_message=(answer.error or failed) if failed else None,
            input_tokens=result.input_tokens,
            output_tokens=result.output_tokens,
            retrieved_ids=[str(h.get("table_id")) for h in result.table_hits],
            detail={
                "solver": answer.solver,
                "confidence": answer.confidence,
                "abstained": answer.abstained,
                "table_ids": answer.table_ids,
                "nodes": result.nodes,
                "steps": step_digest(result.solver_steps),
            },
        )


class SolverMethod:
    """One solver (or reading baseline) alone over the example's tables."""

    def __init__(
        self, name: str, resources: Resources, options: dict[str, Any], table_format: TableFormat
    ) -> None:
        """Store the solver name, its options and the table format of prompts."""
        self.name = name
        self.resources = resources
        self.options = options
        self.table_format = table_format

    def _solver(self, sentence: bool) -> Any:
        res = self.resources
        if self.name in _READERS:
            embeddings = res.embeddings if needs_embeddings(self.name) else None
            prompt = "read_table_sentence" if sentence else "read_table"
            return make_reader(
                self.name, res.chat_model, embeddings=embeddings, prompt=prompt, **self.options
            )
        sandbox = res.sandbox if needs_sandbox(self.name) else None
        return make_solver(self.name, res.chat_model, sandbox, **self.options)

    def run(self, example: EvalExample) -> Prediction:
        """Solve over the example's tables (the first is the main table)."""
        started = time.perf_counter()
        try:
            tables = example.load_tables()
            started = time.perf_counter()
            ctx = SolverContext(
                question=task_question(example),
                tables=_frames(tables),
                caption=(tables[0].caption if tables else "") or example.caption,
                table_format=self.table_format,
            )
            result = self._solver(example.task == "freeform").solve(ctx)
        except Exception as exc:  # noqa: BLE001 - the exception rate counts it
            return _raised(exc, started)
        failed = failed_code(result.trace)
        reading = self.name in _READERS
        return finish(
            example,
            result.answer_items,
            sentence=", ".join(result.answer_items) if reading else result.explanation,
            started=started,
            error=failed is not None,
            error_message=(result.error or failed) if failed else None,
            input_tokens=result.input_tokens,
            output_tokens=result.output_tokens,
            detail={
                "solver": result.solver,
                "iterations": result.iterations,
                "code_errors": result.code_errors,
                "truncated": result.truncated,
                "solver_error": result.error,
                "confidence": round(run_confidence(result, ctx.tables), 3),
            },
        )


class PandasAgentMethod:
    """LangChain's pandas agent with the shared chat model (model code runs in-process)."""

    name = "pandas_agent"

    def __init__(
        self,
        resources: Resources,
        *,
        max_iterations: int = 6,
        max_seconds: float = 300.0,
        head_rows: int = 5,
    ) -> None:
        """Store the model source and the agent's caps."""
        self.resources = resources
        self.max_iterations = max_iterations
        self.max_seconds = max_seconds
        self.head_rows = head_rows

    def run(self, example: EvalExample) -> Prediction:
        """Ask the agent, with an answer-format instruction suited to the task."""
        from tablerag_agents.evaluation.pandas_agent import (
            SENTENCE_ANSWER,
            SHORT_ANSWER,
            run_pandas_agent,
        )

        started = time.perf_counter()
        try:
            frames = [t.df for t in example.load_tables()]
            started = time.perf_counter()
            hint = SENTENCE_ANSWER if example.task == "freeform" else SHORT_ANSWER
            run = run_pandas_agent(
                self.resources.chat_model,
                frames,
                f"{task_question(example)}\n{hint}",
                max_iterations=self.max_iterations,
                max_seconds=self.max_seconds,
                head_rows=self.head_rows,
            )
        except Exception as exc:  # noqa: BLE001 - the exception rate counts it
            return _raised(exc, started)
        return finish(
            example,
            run.items(),
            sentence="" if run.stopped else run.output.strip(),
            started=started,
            error=bool(run.code_errors),
            error_message=run.code_errors[-1] if run.code_errors else None,
            input_tokens=run.input_tokens,
            output_tokens=run.output_tokens,
            detail={"steps": [code for code, _ in run.steps], "stopped": run.stopped},
        )


def task_question(example: EvalExample) -> str:
    """The question as asked: a ``fact`` statement becomes a yes/no question."""
    if example.task == "fact":
        return load_prompt("verify_statement").format(statement=example.question).strip()
    return example.question


def fact_label(items: Sequence[str]) -> str | None:
    """``"1"`` for a yes/true answer, ``"0"`` for no/false, None for anything else."""
    words = re.findall(r"[a-z0-9]+", " ".join(items).lower())
    if not words:
        return None
    if words[0] in _YES:
        return "1"
    if words[0] in _NO:
        return "0"
    return None


def step_digest(steps: Iterable[TraceStep | Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The solver's steps, cut short, so a wrong answer can be classified from its record."""
    digest = []
    for step in steps:
        data = step.model_dump() if isinstance(step, TraceStep) else dict(step)
        digest.append(
            {
                "action": data.get("action"),
                "code": str(data.get("code") or "")[:800],
                "ok": data.get("ok"),
                "observation": str(data.get("observation") or "")[:400],
            }
        )
    return digest


def failed_code(steps: Iterable[TraceStep | Mapping[str, Any]]) -> str | None:
    """The observation of the last model-written Python or SQL that failed, or None."""
    last = None
    for step in steps:
        data = step.model_dump() if isinstance(step, TraceStep) else step
        if data.get("action") in ("python", "sql") and data.get("ok") is False:
            last = str(data.get("observation") or "code failed")
    return last


def finish(
    example: EvalExample, items: list[str], *, sentence: str, started: float, **fields: Any
) -> Prediction:
    """The prediction for ``example``: ``fact`` items mapped to 1/0, sentences for ``freeform``."""
    pred = Prediction(answer=list(items), seconds=time.perf_counter() - started, **fields)
    if example.task == "freeform":
        pred.sentence = sentence.strip()
    if example.task == "fact":
        pred.detail["raw_answer"] = list(items)
        label = fact_label(items)
        pred.answer = [label] if label is not None else []
    return pred


def _raised(exc: Exception, started: float) -> Prediction:
    logger.warning("method raised: %s: %s", type(exc).__name__, exc)
    return Prediction(
        error=True,
        error_message=f"{type(exc).__name__}: {exc}",
        seconds=time.perf_counter() - started,
    )


def _frames(tables: Sequence[Table]) -> dict[str, Any]:
    """Tables by unique id, in order (a repeated id gets ``#2``...)."""
    out: dict[str, Any] = {}
    for table in tables:
        key, i = table.id, 2
        while key in out:
            key, i = f"{table.id}#{i}", i + 1
        out[key] = table.df
    return out


def _options(settings: Mapping[str, str], spec: Mapping[str, Any]) -> dict[str, Any]:
    """The settings named in ``spec``, parsed and checked against their types."""
    out: dict[str, Any] = {}
    for key, kind in spec.items():
        if key not in settings:
            continue
        try:
            out[key] = TypeAdapter(kind).validate_python(parse_value(settings[key]))
        except ValidationError as exc:
            raise ValueError(
                f"bad setting {key}={settings[key]!r}: {exc.errors()[0]['msg']}"
            ) from None
    return out
