"""``include_usage`` (``models.<name>.include_usage``): dsh asks every OpenAI-compatible
server for the usage chunk with ``stream_options: {"include_usage": true}``, and some
refuse the field (older Azure OpenAI API versions: HTTP 400 "Unrecognized request
argument supplied: stream_options"; some proxies); there was no way to stop sending it
but a request option of each request. ``include_usage: false`` sends no
``stream_options``, and a 4xx naming the field after dsh sent it says so. Real turns
and requests over the loopback server; the request body shows what was sent."""

from __future__ import annotations

import pytest
from llm_wire import WireServer, collect, error, sse
from test_llm_http import ASK
from test_providers_study_openai import answer

from dsh.config import ModelConfig
from dsh.errors import ConfigError, ModelError
from dsh.harness import Harness
from dsh.llm._origin import Origin
from dsh.llm.openai import OpenAICompatibleModel
from dsh.testing import run_turn

#: Azure OpenAI's answer (API versions before 2024-09-01-preview)
AZURE_400 = {
    "error": {
        "message": "Unrecognized request argument supplied: stream_options",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
}


def config(url: str, provider: str, extra: str = "") -> str:
    return (
        f"models:\n  wire:\n    provider: {provider}\n    model: m\n"
        f"    base_url: {url}\n    api_key_env: DSH_WIRE_KEY\n{extra}"
        "agents:\n  - id: main\n    model: wire\n"
    )


async def sent(provider: str, extra: str) -> dict[str, object]:
    """The body of the one request a turn sends."""
    async with WireServer([sse(answer("hi."))]) as server:
        text = config(server.url, provider, extra)
        env = {"DSH_WIRE_KEY": "sk-wire-key"}
        async with Harness(config_text=text, load_entry_points=False, env=env) as h:
            agent = h.agents.get("main")
            assert agent is not None
            events = await run_turn(agent, "hello")
        assert events[-1].data["reason"] == "completed"
        body: dict[str, object] = server.requests[0].json()
        return body


@pytest.mark.parametrize("provider", ["openai-compatible", "openai", "deepseek"])
async def test_stream_options_are_sent_by_default(provider: str) -> None:
    body = await sent(provider, "")
    assert body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("provider", ["openai-compatible", "openai"])
async def test_include_usage_false_sends_no_stream_options(provider: str) -> None:
    body = await sent(provider, "    include_usage: false\n")
    assert "stream_options" not in body
    assert body["stream"] is True


async def test_include_usage_that_is_not_a_boolean_names_the_file_line_and_key() -> None:
    text = config("http://127.0.0.1:9/v1", "openai-compatible", "    include_usage: 'no'\n")
    with pytest.raises(ConfigError) as caught:
        async with Harness(config_text=text, load_entry_points=False):
            pass
    assert (caught.value.source, caught.value.path) == ("<string>:7:5", "models.wire.include_usage")
    assert "valid boolean" in caught.value.reason


async def test_include_usage_on_an_anthropic_model_is_refused_where_it_stands() -> None:
    text = config("http://127.0.0.1:9/v1", "anthropic", "    include_usage: false\n")
    with pytest.raises(ConfigError) as caught:
        async with Harness(config_text=text, load_entry_points=False):
            pass
    assert (caught.value.source, caught.value.path) == ("<string>:7:5", "models.wire.include_usage")
    assert "applies only to OpenAI-compatible providers" in caught.value.reason


async def refused(*, entry: bool = True, include_usage: bool | None = None) -> ModelError:
    async with WireServer([error(400, AZURE_400)]) as server:
        settings = ModelConfig(
            provider="openai-compatible", model="m", base_url=server.url, max_retries=0
        )
        model = OpenAICompatibleModel(
            "wire", settings, origin=Origin(entry=entry), include_usage=include_usage
        )
        with pytest.raises(ModelError) as caught:
            await collect(model, ASK)
    return caught.value


async def test_a_400_naming_stream_options_says_to_set_include_usage_false() -> None:
    found = await refused()
    assert found.code == "INVALID_REQUEST"
    assert "Unrecognized request argument supplied: stream_options" in found.message
    assert "set include_usage: false for this model (models.wire.include_usage)" in found.message


async def test_the_hint_without_a_models_entry_says_where_to_set_it() -> None:
    found = await refused(entry=False)
    assert "set include_usage: false for this model in a models: entry of dsh.yml" in (
        found.message
    )


async def test_no_hint_when_dsh_did_not_send_the_field() -> None:
    # include_usage off: whatever names stream_options, dsh's setting did not send it
    found = await refused(include_usage=False)
    assert "include_usage" not in found.message
