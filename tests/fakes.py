"""An honest scripted chat model for tests (no network, no real LLM).

``ScriptedChatModel`` replays the replies it is given, in order, like a real
model would answer: strings become AI messages, AI messages (for example with
``tool_calls``) are returned as they are. Like a real server it cuts a text
reply at the first stop sequence, and it reports token usage (whitespace
tokens of the prompt and the reply) so token accounting can be tested. It
records every prompt, stop list, call keyword (e.g. a bound temperature)
and bound tool list for assertions.

Two honest fake embeddings: ``WordCountEmbeddings`` (hashed word counts, so a
cosine is the word overlap; the filter tests rely on it) and
``BagOfWordsEmbeddings`` (sums of fixed random word vectors; retrieval, graph
and backend tests), each with a per-word token encoder for MaxSim.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from typing import Any

import httpx
import numpy as np
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.embeddings import Embeddings
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field


def count_tokens(text: str) -> int:
    """Whitespace token count used as the fake usage metadata."""
    return len(str(text).split())


class ScriptedChatModel(GenericFakeChatModel):
    """Replay scripted replies; record prompts, stop sequences and bound tools."""

    prompts: list[list[BaseMessage]] = Field(default_factory=list)
    stops: list[list[str] | None] = Field(default_factory=list)
    bound_tools: list[dict[str, Any]] = Field(default_factory=list)
    call_kwargs: list[dict[str, Any]] = Field(default_factory=list)

    def __init__(self, replies: Sequence[str | AIMessage], **kwargs: Any) -> None:
        """Create the model with its replies (streaming off so tool calls survive)."""
        kwargs.setdefault("disable_streaming", True)
        super().__init__(messages=iter(list(replies)), **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.prompts.append(list(messages))
        self.stops.append(stop)
        self.call_kwargs.append(dict(kwargs))
        try:
            reply = next(self.messages)
        except StopIteration:
            raise AssertionError(
                f"ScriptedChatModel ran out of replies after {len(self.prompts) - 1} calls"
            ) from None
        if isinstance(reply, str):
            for s in stop or []:
                if s in reply:
                    reply = reply[: reply.index(s)]
            message = AIMessage(content=reply)
        else:
            message = reply.model_copy()
        prompt_tokens = sum(count_tokens(m.content) for m in messages)
        out_tokens = count_tokens(message.content)
        message.usage_metadata = {
            "input_tokens": prompt_tokens,
            "output_tokens": out_tokens,
            "total_tokens": prompt_tokens + out_tokens,
        }
        return ChatResult(generations=[ChatGeneration(message=message)])

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        **kwargs: Any,
    ) -> ScriptedChatModel:
        """Record the tools (as OpenAI tool schemas) and return this model."""
        self.bound_tools = [convert_to_openai_tool(t) for t in tools]
        return self

    @property
    def remaining(self) -> int:
        """How many scripted replies have not been used."""
        rest = list(self.messages)
        self.messages = iter(rest)
        return len(rest)


def sql_reply(query: str) -> str:
    """A reply of the SQL solver's model: ``query`` in a fenced ``sql`` block."""
    return f"```sql\n{query}\n```"


def tool_call(name: str, args: dict[str, Any], call_id: str = "call_1") -> AIMessage:
    """An AI message asking for one native tool call."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


_DIM = 512


def words(text: str) -> list[str]:
    """Lower-case word tokens."""
    return re.findall(r"[a-z0-9]+", text.lower())


def _slot(word: str) -> int:
    return int(hashlib.sha256(word.encode()).hexdigest(), 16) % _DIM


class WordCountEmbeddings(Embeddings):
    """Honest bag-of-words embeddings: hashed word counts, unit length (cosine = word overlap)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One count vector per text."""
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Hashed word counts, normalised."""
        vec = np.zeros(_DIM, dtype=np.float32)
        for w in words(text):
            vec[_slot(w)] += 1.0
        norm = np.linalg.norm(vec)
        return (vec / norm if norm else vec).tolist()


def word_onehot_encoder(texts: Sequence[str]) -> list[np.ndarray]:
    """Per-token unit vectors: one hashed one-hot per word (MaxSim counts shared words)."""
    out = []
    for text in texts:
        toks = words(text)
        mat = np.zeros((len(toks), _DIM), dtype=np.float32)
        for i, w in enumerate(toks):
            mat[i, _slot(w)] = 1.0
        out.append(mat)
    return out


_WORD = re.compile(r"\w+")


def _word_vector(word: str, dim: int) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
    vec = np.random.default_rng(seed).standard_normal(dim)
    return vec / np.linalg.norm(vec)


class BagOfWordsEmbeddings(Embeddings):
    """A real (if simple) embedding: the sum of fixed random word vectors, lowercased."""

    def __init__(self, dim: int = 64) -> None:
        """Embed in ``dim`` dimensions."""
        self.dim = dim
        self.name = f"bow:{dim}"

    def _embed(self, text: str) -> list[float]:
        vec = np.zeros(self.dim)
        for word in _WORD.findall(text.lower()):
            vec += _word_vector(word, self.dim)
        return vec.tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text."""
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """The text's vector."""
        return self._embed(text)


def word_vector_encoder(texts: Sequence[str], dim: int = 64) -> list[np.ndarray]:
    """One unit vector per lowercased word: MaxSim then counts shared words."""
    out = []
    for text in texts:
        words = _WORD.findall(text.lower())
        out.append(np.stack([_word_vector(w, dim) for w in words]) if words else np.zeros((0, dim)))
    return out


def completion_response(
    texts: Sequence[str], usage: dict[str, Any], model: str = "m"
) -> httpx.Response:
    """An OpenAI ``chat.completion`` response, one choice per text (for a ``MockTransport``)."""
    choices = [
        {"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"}
        for i, t in enumerate(texts)
    ]
    body = {"id": "x", "object": "chat.completion", "created": 0, "model": model}
    return httpx.Response(200, json={**body, "choices": choices, "usage": usage})
