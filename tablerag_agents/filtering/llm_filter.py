"""LLM filter with self-consistency (Wu, TableRAG): sampled pandas filters, run sandboxed, voted.

The model writes pandas code that stores the needed part of ``df`` in
``result``; ``samples`` programs are drawn in one batched request and each
runs in the bubblewrap sandbox (never in this process). A program's outcome
is read back as row positions (``result.index``) and column names, and the
vote is on that sub-table, not on the code text. The filter is conservative:
columns the question names are always kept, columns not in the table are
dropped, and without a clear majority the whole table is kept.
"""

from __future__ import annotations

import ast
import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any

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
    named_columns,
)
from tablerag_agents.prompts import load_prompt
from tablerag_agents.sandbox import Sandbox, Session
from tablerag_agents.solve.llm_calls import QUIET, LLMReply, sample_replies
from tablerag_agents.solve.parsing import extract_code
from tablerag_agents.solve.preview import DEFAULT_FULL_TABLE_TOKENS, clean_numbers, describe_table
from tablerag_agents.solve.quoting import fix_python_apostrophes

logger = logging.getLogger(__name__)

METHOD = "llm_filter"

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
    key: tuple[frozenset[int], tuple[str, ...]] | None = None
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


def _vote(samples: list[Sample]) -> tuple[Any, int, int]:
    """The most common key, its votes, and how many samples voted."""
    keys = [s.key for s in samples if s.key is not None]
    if not keys:
        return None, 0, 0
    (best, votes), *_ = Counter(keys).most_common(1)
    return best, votes, len(keys)


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
) -> SubTable:
    """Select the rows and columns ``question`` needs by voting over sampled filter programs.

    The winning sub-table needs a strict majority of the programs that ran
    (and at least two votes when more than one sample was drawn); otherwise,
    when every program failed, or when the winner is empty, the whole table
    is returned with ``fallback=True`` and a ``reason``.

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

    Raises:
        ValueError: On an empty table or ``samples < 1``.
        SandboxUnavailableError: When the sandbox cannot run here (fail closed).
    """
    check_table(df)
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
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
    best, votes, voters = _vote(runs)
    detail: dict[str, Any] = {
        "samples": samples,
        "ran": voters,
        "votes": votes,
        "errors": [s.error for s in runs if s.error],
        "named_columns": named,
        "codes": [s.code for s in runs],
        "subtables": [
            None if s.key is None else {"rows": sorted(s.key[0]), "columns": list(s.key[1])}
            for s in runs
        ],
    }
    fields = {"detail": detail, **meter.fields()}
    if best is None:
        return SubTable.whole(df, METHOD, "every sample failed", **fields)
    if votes * 2 <= voters or (samples > 1 and votes < 2):
        return SubTable.whole(df, METHOD, f"no majority ({votes} of {voters} agree)", **fields)
    rows, cols = best
    if not rows or not cols:
        return SubTable.whole(df, METHOD, "the voted sub-table is empty", **fields)
    return SubTable.select(df, rows, cols, METHOD, **fields)
