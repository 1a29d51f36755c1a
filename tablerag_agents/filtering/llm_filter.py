"""LLM filter with self-consistency (Wu, TableRAG): sampled pandas filters, run sandboxed, voted.

The model writes pandas code that stores the needed part of ``df`` in
``result``; ``samples`` programs are drawn in one batched request and each
runs in the bubblewrap sandbox (never in this process). A program's outcome
is read back as row positions (``result.index``) and column names, and the
vote is on that outcome, not on the code text. The filter is conservative:
columns the question names are always kept, columns not in the table are
dropped, and without a clear majority the whole table is kept.

Two vote rules (``vote``):

* ``subtable`` (Wu's rule): the most common sub-table, rows and columns
  together, wins with a strict majority of the programs that ran;
* ``columns``: every column chosen by at least half of the programs that ran
  is kept, with every row. Small models rarely write the same row condition
  twice, so the sub-table vote mostly falls back to the whole table; columns
  agree far more often (see ``bench/filters.py``).
"""

from __future__ import annotations

import ast
import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableBinding
from langchain_openai import ChatOpenAI

from tablerag_agents.errors import SandboxError
from tablerag_agents.filtering.base import (
    Meter,
    SubTable,
    check_table,
    column_names,
    display_names,
)
from tablerag_agents.models.calls import LLMReply
from tablerag_agents.models.sampling import sample_replies
from tablerag_agents.prompts import load_prompt
from tablerag_agents.retrieval.rows_columns import named_columns
from tablerag_agents.sandbox import Sandbox, Session
from tablerag_agents.solve.llm_calls import QUIET
from tablerag_agents.solve.parsing import extract_code
from tablerag_agents.solve.preview import DEFAULT_FULL_TABLE_TOKENS, clean_numbers, describe_table
from tablerag_agents.solve.quoting import fix_python_apostrophes

logger = logging.getLogger(__name__)

METHOD = "llm_filter"

Vote = Literal["subtable", "columns"]
"""How the programs' outcomes are combined (see the module docstring)."""

VOTES: tuple[Vote, ...] = ("subtable", "columns")

Key = tuple[frozenset[int], tuple[str, ...]]
"""One program's outcome: the row positions and column names it kept."""

# Runs before each sample: a fresh copy of the table, no variables of earlier samples.
_PROLOGUE = """\
_src = globals().get("_src", df)
for _k in [k for k in globals() if not k.startswith("_") and k not in ("df", "pd", "np")]:
    del globals()[_k]
df = _src.copy()
result = None
"""

# Runs after each sample: the kept row labels and column names as JSON, plus a
# check that the row labels still point at the same rows (no re-numbering).
_EPILOGUE = """
def _tablerag_pick():
    import numbers
    g = globals()
    out = g.get("result")
    if out is None:
        frames = [k for k, v in g.items() if not k.startswith("_") and k not in ("pd", "np")
                  and isinstance(v, (pd.DataFrame, pd.Series))]
        frames = [k for k in frames if k != "df"] or [k for k in frames if g[k] is not _src]
        out = g[frames[-1]] if frames else None
    if isinstance(out, pd.Series):
        if out.name in _src.columns:
            out = out.to_frame()
        elif out.name in _src.index and set(map(str, out.index)) <= set(map(str, _src.columns)):
            out = out.to_frame().T
        else:
            return {"error": "result is a Series that is neither a column nor a row"}
    if not isinstance(out, pd.DataFrame):
        return {"error": f"no DataFrame in result (got {type(out).__name__})"}
    labels = list(out.index)
    rows = [int(i) for i in labels if isinstance(i, numbers.Integral) and not isinstance(i, bool)
            and 0 <= int(i) < len(_src)]
    common = [c for c in dict.fromkeys(out.columns) if c in _src.columns]
    same = total = 0
    for pos, label in enumerate(labels[:50]):
        if not (isinstance(label, numbers.Integral) and 0 <= int(label) < len(_src)):
            continue
        for c in common[:20]:
            try:
                a, b = out[c].iloc[pos], _src[c].iloc[int(label)]
                same += str(a) == str(b)
            except Exception:
                pass
            total += 1
    return {"rows": rows, "columns": [str(c) for c in out.columns],
            "bad_labels": len(labels) - len(rows), "match": same / total if total else None}
_tablerag_pick()
"""


@dataclass
class Sample:
    """One sampled program and the sub-table it selected (``key``), or why it did not count."""

    code: str
    key: Key | None = None
    error: str | None = None


def _code_of(text: str) -> str:
    """The Python code of a reply: its fenced block, else the reply when it parses."""
    code = extract_code(text, "python")
    if code is None:
        stripped = text.strip().strip("`").strip()
        try:
            ast.parse(stripped)
        except SyntaxError:
            return ""
        code = stripped
    return fix_python_apostrophes(code) or code


def _run_sample(
    session: Session,
    code: str,
    columns: list[str],
    shown: list[str],
    named: list[str],
    timeout: float,
) -> Sample:
    """Run one program in the session and turn its ``result`` into a vote key."""
    if not code:
        return Sample(code, error="no code in the reply")
    run = session.run(f"{QUIET}\n{_PROLOGUE}\n{code}\n{_EPILOGUE}", timeout=timeout)
    if not run.ok:
        last = (run.error or "").strip().splitlines()[-1:] or [""]
        return Sample(code, error=last[0][:200] or str(run.error_type))
    out = run.value if isinstance(run.value, dict) else {}
    if "error" in out or not isinstance(out.get("rows"), list):
        return Sample(code, error=str(out.get("error", "unreadable result")))
    if out.get("bad_labels"):
        return Sample(code, error="result rows are not labelled by the table's row numbers")
    match = out.get("match")
    if isinstance(match, int | float) and match < 0.5:
        return Sample(code, error="result rows were re-numbered (values do not line up)")
    picked = {str(c) for c in out.get("columns", [])}
    # Table order; names not in the table are dropped; named columns come back.
    cols = tuple(c for c, s in zip(columns, shown, strict=True) if s in picked or c in named)
    rows = frozenset(int(r) for r in out["rows"])
    return Sample(code, key=(rows, cols))


def _sample(
    model: BaseChatModel, messages: list[BaseMessage], n: int, temperature: float, max_n: int
) -> list[LLMReply]:
    """``n`` sampled replies; an OpenAI-compatible model gets requests of at most ``max_n``."""
    base = model.bound if isinstance(model, RunnableBinding) else model
    if not isinstance(base, ChatOpenAI) or n <= max_n:
        return sample_replies(model, messages, n, temperature)
    replies: list[LLMReply] = []
    while len(replies) < n:
        replies += sample_replies(model, messages, min(max_n, n - len(replies)), temperature)
    return replies


@dataclass(frozen=True)
class Decision:
    """The outcome of a vote: rows and columns to keep, or why the whole table stays."""

    rows: frozenset[int] | None
    columns: tuple[str, ...]
    votes: int
    voters: int
    reason: str = ""


def decide(
    keys: list[Key | None], *, samples: int, vote: Vote, columns: list[str], n_rows: int
) -> Decision:
    """Combine the outcomes of the programs (None: a program that failed) by ``vote``.

    ``subtable``: the most common outcome needs a strict majority of the
    programs that ran, and two votes when more than one program was drawn.
    ``columns``: a column needs the votes of at least half of the programs that
    ran; every row stays. ``rows`` is None (keep the whole table) with a
    ``reason`` when no program ran, there is no majority, or nothing is left.

    Args:
        keys: One outcome per program drawn.
        samples: Programs drawn.
        vote: ``subtable`` or ``columns``.
        columns: The table's column names (the order of the kept ones).
        n_rows: Rows of the table.
    """
    if vote not in VOTES:
        raise ValueError(f"vote must be one of {VOTES}, not {vote!r}")
    ran = [k for k in keys if k is not None]
    if not ran:
        return Decision(None, (), 0, 0, "every sample failed")
    if vote == "columns":
        counts = Counter(c for _, cols in ran for c in set(cols))
        kept = tuple(c for c in columns if 2 * counts[c] >= len(ran))
        votes = min((counts[c] for c in kept), default=0)
        if not kept:
            return Decision(None, (), 0, len(ran), "no column has the votes of half the samples")
        return Decision(frozenset(range(n_rows)), kept, votes, len(ran))
    (best, votes), *_ = Counter(ran).most_common(1)
    if votes * 2 <= len(ran) or (samples > 1 and votes < 2):
        return Decision(None, (), votes, len(ran), f"no majority ({votes} of {len(ran)} agree)")
    rows, cols = best
    if not rows or not cols:
        return Decision(None, (), votes, len(ran), "the voted sub-table is empty")
    return Decision(rows, cols, votes, len(ran))


def llm_filter(
    question: str,
    df: pd.DataFrame,
    model: BaseChatModel,
    sandbox: Sandbox,
    *,
    samples: int = 5,
    temperature: float = 0.7,
    exec_timeout_s: float = 10.0,
    full_table_tokens: int = DEFAULT_FULL_TABLE_TOKENS,
    max_n: int = 4,
    vote: Vote = "subtable",
) -> SubTable:
    """Select the rows and columns ``question`` needs by voting over sampled filter programs.

    With ``vote="subtable"`` the winning sub-table needs a strict majority of
    the programs that ran (and at least two votes when more than one sample
    was drawn); with ``vote="columns"`` the columns at least half of them
    chose are kept, with every row (:func:`decide`). Otherwise, when every
    program failed, or when nothing is left, the whole table is returned
    with ``fallback=True`` and a ``reason``.

    Args:
        question: The question.
        df: The table (not empty).
        model: Chat model writing the filter code.
        sandbox: Where every program runs (one session for all samples).
        samples: Programs drawn (batched requests when the model allows it).
        temperature: Sampling temperature.
        exec_timeout_s: Time limit of one program.
        full_table_tokens: Show every row in the prompt when the table fits in
            this many tokens, else the first rows.
        max_n: Most choices in one request to an OpenAI-compatible server (the
            embedded one allows as many as its parallel slots, 4): 5 samples
            are then one request of 4 and one of 1.
        vote: ``subtable`` (Wu's rule) or ``columns``.

    Raises:
        ValueError: On an empty table, ``samples < 1`` or an unknown ``vote``.
        SandboxUnavailableError: When the sandbox cannot run here (fail closed).
    """
    check_table(df)
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    if vote not in VOTES:
        raise ValueError(f"vote must be one of {VOTES}, not {vote!r}")
    meter = Meter()
    columns = column_names(df)
    named = named_columns(question, columns)
    shown = display_names(columns)
    frame = clean_numbers(df.reset_index(drop=True))
    frame.columns = shown
    table = describe_table(frame, full_table_tokens=full_table_tokens)
    prompt = load_prompt("llm_filter").format(question=question, table=table)
    try:
        replies = _sample(model, [HumanMessage(prompt)], samples, temperature, max(1, max_n))
    except Exception as exc:  # noqa: BLE001 - a failed model call degrades to no filter
        logger.warning("llm_filter: the model call failed: %s", exc)
        return SubTable.whole(df, METHOD, f"model call failed: {exc}", **meter.fields())
    for reply in replies:
        meter.add_tokens(reply.input_tokens, reply.output_tokens)
    try:
        with sandbox.session({"df": frame}) as session:
            runs = [
                _run_sample(session, _code_of(r.text), columns, shown, named, exec_timeout_s)
                for r in replies
            ]
    except (SandboxError, ValueError) as exc:
        logger.warning("llm_filter: the sandbox could not run the samples: %s", exc)
        return SubTable.whole(df, METHOD, f"sandbox failed: {exc}", **meter.fields())
    decision = decide(
        [r.key for r in runs], samples=samples, vote=vote, columns=columns, n_rows=len(df)
    )
    detail: dict[str, Any] = {
        "samples": samples,
        "vote": vote,
        "ran": decision.voters,
        "votes": decision.votes,
        "errors": [s.error for s in runs if s.error],
        "named_columns": named,
        "codes": [s.code for s in runs],
        "subtables": [
            None if s.key is None else {"rows": sorted(s.key[0]), "columns": list(s.key[1])}
            for s in runs
        ],
    }
    fields = {"detail": detail, **meter.fields()}
    if decision.rows is None:
        return SubTable.whole(df, METHOD, decision.reason, **fields)
    return SubTable.select(df, decision.rows, decision.columns, METHOD, **fields)
