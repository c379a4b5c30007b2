"""A ``base_url`` with a query string (Azure OpenAI's ``?api-version=...``, a proxy's
``?key=value``): the adapter's path goes before the query, and the query is kept on
every request, retries included; a fragment is refused when the settings are read.

Before: the adapters appended their path to the whole ``base_url``, so the server was
asked for ``/v1?api-version=2024-10-21/chat/completions``."""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_wire import WireServer, collect, error, recorded, sse
from pydantic import ValidationError

from dsh.config import ModelConfig, load_config
from dsh.errors import ConfigError
from dsh.llm.anthropic import AnthropicModel
from dsh.llm.openai import OpenAICompatibleModel
from dsh.llm.providers import build_model, parse_model_shorthand
from dsh.messages import ModelRequest, UserMessage

ASK = ModelRequest(messages=(UserMessage(content="hi"),))
AZURE_QUERY = "api-version=2024-10-21"


def openai(base_url: str) -> OpenAICompatibleModel:
    config = ModelConfig(provider="openai-compatible", model="m", base_url=base_url)
    return OpenAICompatibleModel("wire", config, backoff=0.01)


@pytest.mark.parametrize("tail", ["", "/"])
async def test_the_chat_completions_path_goes_before_the_query(tail: str) -> None:
    async with WireServer([sse(b"data: [DONE]\n\n")]) as server:
        model = openai(f"{server.url}{tail}?{AZURE_QUERY}")
        assert model.base_url == f"{server.url}?{AZURE_QUERY}"
        await collect(model, ASK)
    assert [r.path for r in server.requests] == [f"/v1/chat/completions?{AZURE_QUERY}"]


async def test_the_anthropic_messages_path_goes_before_the_query() -> None:
    async with WireServer([sse(recorded("anthropic_max_tokens.sse"))]) as server:
        config = ModelConfig(
            provider="anthropic", model="claude-x", base_url=f"{server.url}?a=1&b=two"
        )
        await collect(AnthropicModel("wire", config), ASK)
    assert [r.path for r in server.requests] == ["/v1/messages?a=1&b=two"]


async def test_a_retried_request_keeps_the_query() -> None:
    busy = error(503, {"error": {"message": "busy"}}, {"retry-after": "0"})
    async with WireServer([busy, sse(b"data: [DONE]\n\n")]) as server:
        await collect(openai(f"{server.url}?{AZURE_QUERY}"), ASK)
    assert [r.path for r in server.requests] == [f"/v1/chat/completions?{AZURE_QUERY}"] * 2


async def test_the_m_shorthand_and_build_model_keep_the_query() -> None:
    """The CLI's way in: ``-m openai-compatible:gpt@URL?api-version=...``."""
    async with WireServer([sse(b"data: [DONE]\n\n")]) as server:
        name, config = parse_model_shorthand(f"openai-compatible:gpt@{server.url}?{AZURE_QUERY}")
        await collect(build_model(name, config, env={}), ASK)
    assert [r.path for r in server.requests] == [f"/v1/chat/completions?{AZURE_QUERY}"]


def test_a_fragment_in_base_url_is_refused_naming_the_key(tmp_path: Path) -> None:
    path = tmp_path / "dsh.yml"
    path.write_text(
        "models:\n  azure:\n    provider: openai-compatible\n"
        "    base_url: https://x.example/openai/deployments/d?api-version=1#top\n"
    )
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.path == "models.azure.base_url"
    assert info.value.reason.startswith("must not hold a fragment (#...)")
    with pytest.raises(ValidationError, match="must not hold a fragment"):
        ModelConfig(provider="openai-compatible", base_url="http://127.0.0.1:1/v1#x")
    with pytest.raises(ConfigError, match="must not hold a fragment"):
        parse_model_shorthand("openai-compatible:gpt@http://127.0.0.1:1/v1#x")
