"""Sampled replies over an OpenAI-compatible endpoint: one request with n choices."""

from __future__ import annotations

import json

import httpx
import pytest
from fakes import completion_response
from langchain_core.messages import AIMessage, HumanMessage
from langchain_openai import ChatOpenAI

from tablerag_agents.models.calls import call_model
from tablerag_agents.models.sampling import sample_replies


def _model(requests: list[dict]) -> ChatOpenAI:
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        requests.append(body)
        n = body.get("n", 1)
        usage = {
            "prompt_tokens": 50,
            "completion_tokens": 4 * n,
            "total_tokens": 50 + 4 * n,
            "prompt_tokens_details": {"cached_tokens": 30},
        }
        return completion_response([f"answer {i}" for i in range(n)], usage)

    client = httpx.Client(transport=httpx.MockTransport(handler))
    return ChatOpenAI(base_url="http://local/v1", api_key="x", model="m", http_client=client)


def test_sample_replies_is_one_request_with_n_choices() -> None:
    requests: list[dict] = []
    model = _model(requests).bind(extra_body={"cache_prompt": False})
    replies = sample_replies(model, [HumanMessage("q")], 3, temperature=0.8)
    assert [r.text for r in replies] == ["answer 0", "answer 1", "answer 2"]
    assert len(requests) == 1
    assert requests[0]["n"] == 3 and requests[0]["temperature"] == 0.8
    # No seed: a server may give every choice of one request the same seed's sample.
    assert "seed" not in requests[0]
    assert requests[0]["cache_prompt"] is False  # the binding's extra_body survives
    assert (replies[0].input_tokens, replies[0].output_tokens, replies[0].cached_tokens) == (
        50,
        12,
        30,
    )
    assert replies[1].input_tokens == 0


def test_retries_sample_with_a_fixed_seed() -> None:
    """Two evaluation runs must not differ by the luck of their retries."""
    from tablerag_agents.models.calls import RETRY_SEED, retry_model

    requests: list[dict] = []
    model = _model(requests)
    for _ in range(2):
        call_model(retry_model(model, 0.6), [HumanMessage("q")])
    assert [(r["temperature"], r["seed"]) for r in requests] == [(0.6, RETRY_SEED)] * 2
    assert retry_model(model, None) is model


def test_call_model_reads_usage_and_stop() -> None:
    requests: list[dict] = []
    reply = call_model(_model(requests), [HumanMessage("q")], stop=["Observation:"])
    assert reply.text == "answer 0" and reply.input_tokens == 50 and reply.cached_tokens == 30
    assert requests[0]["stop"] == ["Observation:"]


def test_sample_n_and_sample_replies_share_one_sampler() -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from tablerag_agents.models.sampling import sample_n

    class SeedEcho(FakeListChatModel):
        def invoke(self, messages, config=None, *, stop=None, **kwargs):  # type: ignore[no-untyped-def, override]
            return AIMessage(f"seed {kwargs['seed']} t {kwargs['temperature']}")

    model = SeedEcho(responses=["unused"])
    assert sample_n(model, [HumanMessage("q")], 3, temperature=0.5) == [
        "seed 0 t 0.5",
        "seed 1 t 0.5",
        "seed 2 t 0.5",
    ]
    with pytest.raises(ValueError, match="n must be"):
        sample_n(model, [HumanMessage("q")], 0)
