"""A deterministic fake chat model for the server tests and the load benchmark.

``ProgramChatModel`` answers like a table-QA model would, but from the prompt
alone: asked for SQL or a ``process_df`` function about "... total of value
for n up to N ..." it writes a program computing that total over the table, and
for "Which n has value V?" one that looks the cell up; asked to rewrite a
follow-up, it repeats the follow-up. So concurrent conversations get the right
answer for *their* question whatever order the calls arrive in, which a
FIFO-scripted model cannot promise.

With ``sql_fails=True`` every SQL it writes names a missing column, so the
graph's default retries move on to ``process_df`` and run Python in the sandbox.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pandas as pd
from fakes import BagOfWordsEmbeddings
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, SystemMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import ConfigDict, Field, PrivateAttr

from tablerag_agents.resources import Resources
from tablerag_agents.tables import Table

_UP_TO = re.compile(r"\bn up to (\d+)", re.I)
_WHICH = re.compile(r"\bwhich n has value (\d+)", re.I)
_FOLLOW_UP = re.compile(r"^Follow-up question:\s*(.+)$", re.M)
_QUESTION = re.compile(r"^Question:\s*(.+)$", re.M)
_WORDS = re.compile(r"\S+\s*|\s+")


def numbers_table(rows: int = 300) -> pd.DataFrame:
    """The table the fake model's programs compute over: ``n`` and ``value = n * n``."""
    n = list(range(1, rows + 1))
    return pd.DataFrame({"n": n, "value": [i * i for i in n]})


def expected_total(limit: int) -> int:
    """The right answer to "total of value for n up to ``limit``" over :func:`numbers_table`."""
    return limit * (limit + 1) * (2 * limit + 1) // 6


def lookup_question(value: int) -> str:
    """A question whose answer is a cell: the ``n`` whose ``value`` is ``value``."""
    return f"Which n has value {value}?"


def question(limit: int, prefix: str = "") -> str:
    """A question the fake model can answer (``prefix`` tells conversations apart)."""
    return f"{prefix}What is the total of value for n up to {limit}?".strip()


def _programs(asked: str) -> tuple[str, str]:
    """The SQL query and the ``process_df`` return expression answering ``asked``."""
    if which := _WHICH.search(asked):
        value = which.group(1)
        return f'SELECT "n" FROM t WHERE "value" = {value}', (
            f'int(df.loc[df["value"] == {value}, "n"].iloc[0])'
        )
    if total := _UP_TO.search(asked):
        limit = total.group(1)
        return f'SELECT SUM("value") FROM t WHERE "n" <= {limit}', (
            f'int(df.loc[df["n"] <= {limit}, "value"].sum())'
        )
    return "", ""


def _usage(messages: list[BaseMessage], reply: str) -> UsageMetadata:
    """Whitespace-token counts of the prompt and the reply."""
    prompt = sum(len(str(m.content).split()) for m in messages)
    out = len(reply.split())
    return {"input_tokens": prompt, "output_tokens": out, "total_tokens": prompt + out}


class ProgramChatModel(BaseChatModel):
    """Write the SQL or ``process_df`` program that answers the question in the prompt.

    Args:
        sql_fails: Write SQL over a missing column (forces the retry with Python).
        delay_s: Seconds each call takes (a stand-in for generation time).
        gate: When set, solver calls wait until this event is set (tests use it
            to read stream events while the run is provably still going).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    sql_fails: bool = False
    delay_s: float = 0.0
    gate: threading.Event | None = None
    calls: int = Field(default=0)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "program-fake"

    def reply_for(self, messages: list[BaseMessage]) -> str:
        """The reply text for a prompt (raises on a prompt it was not made for)."""
        with self._lock:
            self.calls += 1
        system = " ".join(str(m.content) for m in messages if isinstance(m, SystemMessage))
        first_user = next((str(m.content) for m in messages if m.type == "human"), "")
        follow_up = _FOLLOW_UP.search(first_user)
        if "rewrite follow-up questions" in first_user and follow_up:
            return follow_up.group(1).strip()
        asked = _QUESTION.findall(first_user)
        sql, python = _programs(asked[-1] if asked else "")
        if not sql:
            raise ValueError(f"ProgramChatModel cannot answer this prompt: {first_user[:200]!r}")
        if self.gate is not None:
            self.gate.wait(timeout=30)
        if "SQL" in system:
            if self.sql_fails:
                return '```sql\nSELECT SUM("no_such_column") FROM t\n```'
            return f"```sql\n{sql}\n```"
        if "process_df" in system:
            return f"```python\ndef process_df(df):\n    return {python}\n```"
        raise ValueError(f"ProgramChatModel: unknown solver prompt {system[:120]!r}")

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text = self.reply_for(messages)
        if self.delay_s:
            time.sleep(self.delay_s)
        message = AIMessage(content=text, usage_metadata=_usage(messages, text))
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        text = self.reply_for(messages)
        words = _WORDS.findall(text)
        for i, word in enumerate(words):
            if self.delay_s:
                time.sleep(self.delay_s / max(len(words), 1))
            usage = _usage(messages, text) if i == len(words) - 1 else None
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=word, usage_metadata=usage))
            if run_manager is not None:
                run_manager.on_llm_new_token(word, chunk=chunk)
            yield chunk


def numbers_resources(model: Any | None = None, **kwargs: Any) -> Resources:
    """Resources with the fake model, bag-of-words embeddings and the ``numbers`` table."""
    res = Resources(
        chat_model=model or ProgramChatModel(), embeddings=BagOfWordsEmbeddings(), **kwargs
    )
    res.add_table(Table("numbers", numbers_table(), caption="numbers and their squares"))
    return res
