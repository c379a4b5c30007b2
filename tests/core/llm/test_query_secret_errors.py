"""A key written into the query of a ``base_url`` (``-m openai-compatible:m@URL?api-key=...``,
a proxy's ``?key=...``) is hidden from the error messages of the HTTP adapters wherever
the API key is (behaviour 13: the turn ends ``error`` with the provider's message, which
goes into turn/end and the session file).

Before: ``dsh.llm._errors`` hid only the API key, so a 404 body quoting the request's
address, a redirect's ``Location`` repeating the query, an error inside the stream or an
unreadable chunk quoting it showed the query's key whole; under ``-m`` the harness's
secrets did not know it either, so turn/end kept it (the last two tests: now they do,
as they know those of the ``HttpModel`` models registered in the harness,
``ModelRegistry.written_keys``)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from llm_wire import Reply, WireServer, collect, error, sse

from dsh._secrets import redact
from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.harness import Harness
from dsh.llm._errors import error_from_transport
from dsh.llm.anthropic import AnthropicModel
from dsh.llm.choose import choose_model
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import ModelRequest, UserMessage

ASK = ModelRequest(messages=(UserMessage(content="hi"),))
KEY = "sk-test-aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7n"
SECRET = "qs-SECRETVALUE-abcdef123456"


def openai(url: str) -> OpenAICompatibleModel:
    config = ModelConfig(
        provider="openai-compatible",
        model="m",
        base_url=f"{url}?api-key={SECRET}",
        api_key_env="K",
        max_retries=0,
    )
    return OpenAICompatibleModel("wire", config, env={"K": KEY}, backoff=0.01)


def anthropic(url: str) -> AnthropicModel:
    config = ModelConfig(
        provider="anthropic",
        model="c",
        base_url=f"{url}?key={SECRET}",
        api_key_env="K",
        max_retries=0,
    )
    return AnthropicModel("wire", config, env={"K": KEY}, backoff=0.01)


async def failure(model: Any, *replies: Reply) -> ModelError:
    async with WireServer(list(replies)) as server:
        with pytest.raises(ModelError) as caught:
            await collect(model(server.url), ASK)
    return caught.value


def shows(text: str) -> bool:
    """Whether ``text`` holds the query's key or its first or last half."""
    return any(part in text for part in (SECRET, SECRET[:14], SECRET[-14:]))


@pytest.mark.parametrize("adapter", [openai, anthropic])
async def test_a_404_body_quoting_the_address_shows_the_query_key_hidden(adapter: Any) -> None:
    said = f"Resource not found: POST /v1/chat/completions?api-key={SECRET}"
    caught = await failure(adapter, error(404, {"error": {"message": said, "type": "not_found"}}))
    assert caught.code == "INVALID_REQUEST"
    assert "Resource not found" in caught.message and "***" in caught.message
    assert not shows(caught.message)


@pytest.mark.parametrize("adapter", [openai, anthropic])
async def test_a_redirect_repeating_the_query_shows_its_key_hidden(adapter: Any) -> None:
    moved = Reply(307, b"", {"location": f"https://elsewhere.example/v1?api-key={SECRET}"})
    caught = await failure(adapter, moved)
    assert "the server redirects to https://elsewhere.example/v1?api-key=***" in caught.message
    assert not shows(caught.message)


async def test_an_error_inside_the_openai_stream_shows_the_query_key_hidden() -> None:
    body = b'data: {"error": {"message": "bad address ?api-key=%s"}}\n\n' % SECRET.encode()
    caught = await failure(openai, sse(body))
    assert caught.code == "SERVER" and "bad address ?api-key=***" in caught.message
    assert not shows(caught.message)


async def test_an_error_event_of_anthropic_shows_the_query_key_hidden() -> None:
    data = b'{"type": "error", "error": {"type": "api_error", "message": "at ?key=%s"}}'
    caught = await failure(
        anthropic, sse(b"event: error\ndata: " + data % SECRET.encode() + b"\n\n")
    )
    assert caught.code == "SERVER" and "at ?key=***" in caught.message
    assert not shows(caught.message)


@pytest.mark.parametrize("adapter", [openai, anthropic])
async def test_an_unreadable_chunk_quoting_the_query_key_shows_it_hidden(adapter: Any) -> None:
    caught = await failure(adapter, sse(b"data: {not json ?api-key=%s\n\n" % SECRET.encode()))
    assert caught.code == "MALFORMED_RESPONSE"
    assert not shows(caught.message)


def test_a_transport_error_hides_every_value_it_is_given() -> None:
    exc = httpx.ConnectError(f"refused: /v1?api-key={SECRET}")
    caught = error_from_transport("m", exc, streaming=False, secret=(KEY, SECRET))
    assert caught.code == "TRANSPORT" and "?api-key=***" in caught.message
    assert not shows(caught.message)
    assert caught.__cause__ is None  # the cause's text shows the key: not kept


async def test_the_harness_secrets_know_the_query_key_of_a_m_shorthand() -> None:
    # Harness.secrets knew only the base_url of models: entries, not that of a model
    # registered from -m (dsh.llm.choose): a -m query key reached tool results
    async with Harness(load_entry_points=False) as harness:
        assert SECRET not in harness.secrets()  # asked for before: not kept stale
        choose_model(harness, f"openai-compatible:m@http://127.0.0.1:1/v1?api-key={SECRET}", {})
        assert SECRET in harness.secrets()


async def test_the_harness_secrets_know_the_query_key_of_a_plugins_http_model() -> None:
    async with Harness(load_entry_points=False) as harness:
        harness.models.add("toy", openai("http://127.0.0.1:1/v1"))
        assert SECRET in harness.secrets()
        assert "***" in redact(f"GET /v1?api-key={SECRET}", harness.secrets())
