"""Issue 10 item 6: the embedded llama server only answers requests that carry its key.

It listens on 127.0.0.1, which every local user can reach; a random key per
server, known only to this process, keeps them from using it.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from langchain_core.messages import HumanMessage
from pydantic import SecretStr

from tablerag_agents.config import Settings
from tablerag_agents.models.server import ALIAS, ServerParams, common_params, new_api_key


def test_key_generator_gives_long_random_keys() -> None:
    keys = {new_api_key() for _ in range(20)}
    assert len(keys) == 20
    assert all(len(k) >= 32 and k.strip() == k and k != "local" for k in keys)


def test_server_params_carry_the_key() -> None:
    pytest.importorskip("xllamacpp")
    key = new_api_key()
    params = common_params(ServerParams(model_path=Path("model.gguf")), key)
    assert list(params.api_keys) == [key]
    assert params.hostnames == ["127.0.0.1"]
    other = common_params(ServerParams(model_path=Path("model.gguf")), new_api_key())
    assert list(other.api_keys) != list(params.api_keys)


@pytest.mark.slow
def test_real_server_refuses_requests_without_its_key() -> None:
    from tablerag_agents.models import get_chat_model
    from tablerag_agents.models.gguf import ensure_gguf
    from tablerag_agents.models.server import get_server

    settings = Settings(llm_cache=False)
    server = get_server(
        ServerParams(
            model_path=ensure_gguf(Path(settings.cache_dir) / "models"),
            n_ctx_per_slot=settings.n_ctx,
            n_parallel=settings.n_parallel,
            n_threads=settings.n_threads,
        )
    )
    url = f"{server.base_url}/chat/completions"
    body = {"model": ALIAS, "messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 1}
    assert httpx.post(url, json=body, timeout=120).status_code == 401
    for wrong in ("local", new_api_key()):
        headers = {"Authorization": f"Bearer {wrong}"}
        assert httpx.post(url, json=body, headers=headers, timeout=120).status_code == 401
    headers = {"Authorization": f"Bearer {server.api_key}"}
    assert httpx.post(url, json=body, headers=headers, timeout=300).status_code == 200
    # The library's own client carries the key.
    model = get_chat_model(settings)
    assert model.openai_api_key == SecretStr(server.api_key)  # type: ignore[attr-defined]
    assert model.invoke([HumanMessage("What is 2+3? Reply with the number only.")]).content
