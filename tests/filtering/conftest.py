"""Fixtures for the filter tests: small real WTQ tables, honest fake encoders, a sandbox."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

DATA = Path(__file__).resolve().parent.parent / "data"
DIM = 512


def words(text: str) -> list[str]:
    """Lower-case word tokens."""
    return re.findall(r"[a-z0-9]+", text.lower())


def _slot(word: str) -> int:
    return int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIM


class BagOfWords(Embeddings):
    """Honest bag-of-words embeddings: hashed word counts, unit length."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One count vector per text."""
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Hashed word counts, normalised."""
        vec = np.zeros(DIM, dtype=np.float32)
        for w in words(text):
            vec[_slot(w)] += 1.0
        norm = np.linalg.norm(vec)
        return (vec / norm if norm else vec).tolist()


def word_token_encoder(texts: Sequence[str]) -> list[np.ndarray]:
    """Per-token unit vectors: one hashed one-hot per word (MaxSim counts shared words)."""
    out = []
    for text in texts:
        toks = words(text)
        mat = np.zeros((len(toks), DIM), dtype=np.float32)
        for i, w in enumerate(toks):
            mat[i, _slot(w)] = 1.0
        out.append(mat)
    return out


class WindowPicker(BaseChatModel):
    """A fake PieTa selector that reads the window in the prompt and applies a fixed rule.

    It picks the window's columns in ``wanted``; if ``condition`` (column, value)
    is among them, only the rows meeting it, else every row (the paper's target
    rule). Deterministic whatever the call order, so batches may run in parallel.
    """

    wanted: list[str]
    condition: tuple[str, str] | None = None
    prompts: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "window-picker"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        prompt = str(messages[-1].content)
        self.prompts.append(prompt)
        lines = [
            ln for ln in prompt.split("Now this piece.")[-1].splitlines() if ln.startswith("|")
        ]
        header = [c.strip() for c in lines[0].strip("|").split("|")]
        body = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines[2:]]
        cols = [c for c in header[1:] if c in self.wanted]
        rows = [int(r[0]) for r in body]
        if self.condition and self.condition[0] in cols:
            at = header.index(self.condition[0])
            rows = [int(r[0]) for r in body if r[at] == self.condition[1]]
        reply = json.dumps({"rows": rows if cols else [], "columns": cols})
        message = AIMessage(
            content=reply,
            usage_metadata={
                "input_tokens": len(prompt.split()),
                "output_tokens": len(reply.split()),
                "total_tokens": len(prompt.split()) + len(reply.split()),
            },
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


@pytest.fixture
def albums() -> pd.DataFrame:
    """WTQ table 200-csv/0 (first 8 rows), read as strings like the WTQ loader."""
    return pd.read_csv(DATA / "wtq_200_0.csv", dtype=str, keep_default_na=False)


@pytest.fixture
def seasons() -> pd.DataFrame:
    """Rows from WTQ table 204-csv/590 (as strings)."""
    return pd.DataFrame(
        {
            "Year": ["2001", "2002", "2003", "2004", "2005"],
            "Division": ["2", "2", "2", "2", "2"],
            "League": ["USL A-League"] * 4 + ["USL First Division"],
            "Regular Season": [
                "4th, Western",
                "2nd, Pacific",
                "3rd, Pacific",
                "1st, Western",
                "5th",
            ],
            "Avg. Attendance": ["7,169", "6,260", "5,871", "5,628", "6,028"],
        }
    )


@pytest.fixture
def bag_of_words() -> BagOfWords:
    """Bag-of-words embeddings."""
    return BagOfWords()


@pytest.fixture
def token_encoder() -> Callable[[Sequence[str]], list[np.ndarray]]:
    """Word one-hot token encoder for MaxSim."""
    return word_token_encoder


@pytest.fixture(scope="session")
def sandbox():
    """One real bubblewrap sandbox shared by the filter tests."""
    from tablerag_agents.sandbox import Sandbox

    sb = Sandbox()
    yield sb
    sb.close()
