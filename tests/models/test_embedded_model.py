"""The real embedded local model: answers, counts tokens, reuses cached prefixes."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from tablerag_agents.config import Settings
from tablerag_agents.models import get_chat_model, get_usage_metadata_callback
from tablerag_agents.models.sampling import sample_n

pytestmark = pytest.mark.slow


def test_embedded_model_answers_counts_tokens_and_caches_prefix(tmp_path: Path) -> None:
    model = get_chat_model(Settings(llm_cache=False))
    prefix = "Table:\n" + "\n".join(f"| row {i} | value {i * 7} |" for i in range(30))
    with get_usage_metadata_callback() as cb:
        first = model.invoke([HumanMessage(prefix + "\nWhat is 2+3? Reply with the number only.")])
        second = model.invoke([HumanMessage(prefix + "\nWhat is 4+4? Reply with the number only.")])
    assert "5" in str(first.content)
    assert "8" in str(second.content)
    usage = next(iter(cb.usage_metadata.values()))
    assert usage["input_tokens"] > 2 * 200
    # The second prompt shares the table prefix: the server reuses its KV cache.
    cached = (second.usage_metadata or {}).get("input_token_details", {}).get("cache_read", 0)
    assert cached >= 200


def test_embedded_model_samples_in_one_request() -> None:
    model = get_chat_model(Settings(llm_cache=False))
    samples = sample_n(model, [HumanMessage("Name one colour. One word.")], 3)
    assert len(samples) == 3 and all(s.strip() for s in samples)
