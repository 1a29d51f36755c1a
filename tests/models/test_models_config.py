"""Settings, GGUF assembly and the chat-model factory, without a real model."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import httpx
import pytest
from fakes import completion_response
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from tablerag_agents.config import Settings
from tablerag_agents.errors import ModelError
from tablerag_agents.models import get_usage_metadata_callback, gguf
from tablerag_agents.models.chat import get_chat_model
from tablerag_agents.models.embeddings import embeddings_name, get_embeddings
from tablerag_agents.models.sampling import sample_n


def test_settings_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "tablerag.toml"
    cfg.write_text('chat_model = "openai:gpt-4o-mini"\nmax_tokens = 77\nn_parallel = 2\n')
    monkeypatch.setenv("TABLERAG_CONFIG", str(cfg))
    monkeypatch.setenv("TABLERAG_MAX_TOKENS", "99")
    s = Settings()
    assert s.chat_model == "openai:gpt-4o-mini"  # from the file
    assert s.max_tokens == 99  # env beats file
    assert s.n_parallel == 2
    assert Settings(max_tokens=5).max_tokens == 5  # kwargs beat env
    assert "api_key" not in s.public_dict()


def test_settings_reject_bad_values() -> None:
    with pytest.raises(ValueError):
        Settings(temperature=5)


def _fake_parts(tmp_path: Path, chunks: list[bytes]) -> list[Path]:
    paths = []
    for i, data in enumerate(chunks):
        p = tmp_path / f"part{i}.bin"
        p.write_bytes(data)
        paths.append(p)
    return paths


def test_gguf_assembly_verifies_and_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]
    whole = b"".join(chunks)
    monkeypatch.setattr(gguf, "part_paths", lambda: _fake_parts(tmp_path, chunks))
    monkeypatch.setattr(gguf, "SIZE", len(whole))
    monkeypatch.setattr(gguf, "SHA256", hashlib.sha256(whole).hexdigest())
    out = gguf.ensure_gguf(tmp_path / "cache")
    assert out.read_bytes() == whole
    # A second call uses the cache: parts are not read again.
    monkeypatch.setattr(gguf, "part_paths", lambda: pytest.fail("re-assembled"))
    assert gguf.ensure_gguf(tmp_path / "cache") == out


def test_gguf_bad_checksum_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = [b"GGUF" + b"x" * 10]
    monkeypatch.setattr(gguf, "part_paths", lambda: _fake_parts(tmp_path, chunks))
    monkeypatch.setattr(gguf, "SIZE", 14)
    monkeypatch.setattr(gguf, "SHA256", "0" * 64)
    with pytest.raises(ModelError, match="does not match"):
        gguf.ensure_gguf(tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []


def _completion(content: str | list[str], calls: list[dict]) -> httpx.MockTransport:
    """An OpenAI-compatible endpoint that records requests and answers `content`."""

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        calls.append(body)
        texts = content if isinstance(content, list) else [content]
        usage = {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
        return completion_response(texts[: body.get("n", 1)], usage, body["model"])

    return httpx.MockTransport(handler)


def test_openai_compatible_endpoint_with_cache_and_usage(tmp_path: Path) -> None:
    settings = Settings(chat_model="my-model", base_url="http://127.0.0.1:9/v1", cache_dir=tmp_path)
    factory_model = get_chat_model(settings)
    assert isinstance(factory_model, ChatOpenAI)
    assert str(factory_model.openai_api_base) == settings.base_url
    calls: list[dict] = []
    # Same model, but its HTTP goes to an in-process fake endpoint.
    model = ChatOpenAI(
        base_url=settings.base_url,
        api_key="none",
        model="my-model",
        http_client=httpx.Client(transport=_completion("42", calls)),
        cache=factory_model.cache,
        temperature=0,
    )
    with get_usage_metadata_callback() as cb:
        first = model.invoke([HumanMessage("q?")])
    second = model.invoke([HumanMessage("q?")])
    assert first.content == second.content == "42"
    assert len(calls) == 1  # the second answer came from the SQLite cache
    assert (tmp_path / "llm_cache.sqlite").is_file()
    assert cb.usage_metadata["my-model"]["input_tokens"] == 11
    assert cb.usage_metadata["my-model"]["output_tokens"] == 3


def test_sample_n_uses_one_request_with_n_choices() -> None:
    calls: list[dict] = []
    model = ChatOpenAI(
        base_url="http://127.0.0.1:9/v1",
        api_key="none",
        model="m",
        http_client=httpx.Client(transport=_completion(["a", "b", "c"], calls)),
    )
    out = sample_n(model, [HumanMessage("pick")], 3)
    assert out == ["a", "b", "c"]
    assert len(calls) == 1 and calls[0]["n"] == 3 and calls[0]["temperature"] == 0.7


def test_unknown_provider_is_a_clear_error() -> None:
    with pytest.raises(ModelError, match="cannot create chat model"):
        get_chat_model(Settings(chat_model="nosuchprovider:model", llm_cache=False))


def test_embeddings_factory_errors_and_names(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="unknown embeddings"):
        get_embeddings(Settings(embeddings=str(tmp_path / "missing")))
    emb = get_embeddings(Settings())
    assert embeddings_name(emb).startswith("st:model:")
