"""A fake PieTa window selector (a chat model that applies a fixed rule to the window)."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field


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
