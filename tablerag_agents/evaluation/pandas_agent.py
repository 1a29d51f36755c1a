"""LangChain's pandas DataFrame agent, as the reference a user would pick instead.

.. warning::
   ``create_pandas_dataframe_agent`` **executes model-written Python in this
   process**, with the harness's own permissions: no sandbox, no resource
   limits, full file and network access. That is why it lives only in the
   evaluation harness and never in the library (whose code solvers run in the
   bubblewrap sandbox). Run it only on trusted benchmark tables, in a
   disposable environment. Reports print :data:`PANDAS_AGENT_WARNING`.

The agent is the text ReAct kind (``zero-shot-react-description``), which
works with chat models without native tool calls (such as the embedded local
model). Its iterations and wall time are capped; the time cap is checked
between steps, so one runaway statement is not interrupted.

Needs the ``eval`` extra (``langchain-experimental``, ``tabulate``).
"""

from __future__ import annotations

import re
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from langchain_core.language_models import BaseChatModel

from tablerag_agents.solve.parsing import clean_answer

PANDAS_AGENT_WARNING = (
    "pandas_agent is LangChain's create_pandas_dataframe_agent: it executes model-written "
    "Python in the host process, without any sandbox (allow_dangerous_code=True). It is a "
    "reference run only by the evaluation harness, never in the library; never use it on "
    "untrusted tables or questions."
)
"""What a report must say next to the pandas agent's figures."""

STOPPED = "Agent stopped due to iteration limit or time limit."
"""The agent's output when it hit ``max_iterations`` or ``max_seconds``."""

SHORT_ANSWER = (
    "Give the final answer as only the value(s), without explanation; "
    "separate several values with |."
)
SENTENCE_ANSWER = "Give the final answer as one complete sentence."

_REPL_TOOL = "python_repl_ast"
# The REPL tool returns "<ExceptionType>: <message>" instead of raising.
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b:?")


@dataclass
class AgentRun:
    """What the pandas agent did for one question.

    Attributes:
        output: The agent's final answer text (``STOPPED`` at a limit).
        steps: ``(code, observation)`` of every tool call, in order.
        code_errors: Observations of the calls whose code raised.
        input_tokens: Prompt tokens over every model call.
        output_tokens: Completion tokens over every model call.
        seconds: Wall time.
    """

    output: str
    steps: list[tuple[str, str]] = field(default_factory=list)
    code_errors: list[str] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0

    @property
    def stopped(self) -> bool:
        """True when the agent hit its iteration or time limit."""
        return self.output.strip() == STOPPED

    def items(self) -> list[str]:
        """The final answer as items (split on ``|``), none when it stopped."""
        if self.stopped:
            return []
        return [p.strip() for p in clean_answer(self.output).split("|") if p.strip()]


def is_code_error(observation: Any) -> bool:
    """True if a REPL observation is an exception message."""
    return isinstance(observation, str) and bool(_EXCEPTION.match(observation.strip()))


def run_pandas_agent(
    model: BaseChatModel,
    frames: Sequence[pd.DataFrame],
    question: str,
    *,
    max_iterations: int = 6,
    max_seconds: float = 300.0,
    head_rows: int = 5,
) -> AgentRun:
    """Ask LangChain's pandas agent ``question`` over ``frames`` (``df``, or ``df1``...).

    **Runs model-written code in this process** (see :data:`PANDAS_AGENT_WARNING`).

    Args:
        model: Chat model (the same one the other methods use).
        frames: The tables; one is ``df`` in the code, several are ``df1``, ``df2``...
        question: The question, with any answer-format instruction.
        max_iterations: Tool calls at most before the agent is stopped.
        max_seconds: Wall time after which the agent stops (checked between steps).
        head_rows: Rows of each table shown in the prompt.

    Raises:
        ImportError: Without the ``eval`` extra.
        ValueError: Without any table.
    """
    if not frames:
        raise ValueError("the pandas agent needs at least one table")
    from tablerag_agents.graphs.tracing import TokenCounter

    create = _agent_factory()
    executor = create(
        model,
        frames[0] if len(frames) == 1 else list(frames),
        agent_type="zero-shot-react-description",
        max_iterations=max_iterations,
        max_execution_time=max_seconds,
        number_of_head_rows=head_rows,
        return_intermediate_steps=True,
        agent_executor_kwargs={"handle_parsing_errors": True},
        allow_dangerous_code=True,  # the reason this agent is confined to the harness
    )
    counter = TokenCounter()
    started = time.perf_counter()
    out = executor.invoke({"input": question}, config={"callbacks": [counter]})
    run = AgentRun(
        output=str(out.get("output", "")),
        input_tokens=counter.input_tokens,
        output_tokens=counter.output_tokens,
        seconds=time.perf_counter() - started,
    )
    for action, observation in out.get("intermediate_steps") or []:
        if getattr(action, "tool", "") != _REPL_TOOL:
            continue  # "_Exception": a reply the agent could not parse, not code
        run.steps.append((str(action.tool_input), str(observation)))
        if is_code_error(observation):
            run.code_errors.append(str(observation))
    return run


def _agent_factory() -> Any:
    """``create_pandas_dataframe_agent``, imported quietly (its package warns it is sunset)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from langchain_experimental.agents.agent_toolkits import (
                create_pandas_dataframe_agent,
            )
    except ImportError as exc:
        raise ImportError(
            "the pandas agent needs the eval extra: pip install 'tablerag-agents[eval]'"
        ) from exc
    return create_pandas_dataframe_agent
