"""``max_tokens_field`` (the chat-completions body key of the output cap,
``max_tokens`` or ``max_completion_tokens``) set from dsh.yml, as
``models.<name>.max_tokens_field``: it was a constructor argument of the
OpenAI-compatible adapter only, chosen by provider otherwise (``max_completion_tokens``
for ``provider: openai``), so a dsh.yml could not send ``max_completion_tokens`` to an
OpenAI-compatible gateway in front of OpenAI's reasoning models (which refuse
``max_tokens``), nor ``max_tokens`` to a server behind ``provider: openai`` that knows
only that one. Real turns over the loopback server; the request body shows the key."""

from __future__ import annotations

import pytest
from llm_wire import WireServer, sse
from test_providers_study_openai import answer

from dsh.errors import ConfigError
from dsh.harness import Harness
from dsh.testing import run_turn


def config(url: str, provider: str, extra: str = "") -> str:
    return (
        f"models:\n  wire:\n    provider: {provider}\n    model: m\n"
        f"    base_url: {url}\n    api_key_env: DSH_WIRE_KEY\n"
        f"    max_output_tokens: 321\n{extra}"
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


@pytest.mark.parametrize(
    ("provider", "setting", "field", "other"),
    [
        ("openai-compatible", "", "max_tokens", "max_completion_tokens"),  # the default
        ("openai", "", "max_completion_tokens", "max_tokens"),  # openai's default
        (
            "openai-compatible",
            "    max_tokens_field: max_completion_tokens\n",
            "max_completion_tokens",
            "max_tokens",
        ),
        ("openai", "    max_tokens_field: max_tokens\n", "max_tokens", "max_completion_tokens"),
        (
            "deepseek",
            "    max_tokens_field: max_completion_tokens\n",
            "max_completion_tokens",
            "max_tokens",
        ),
    ],
)
async def test_max_tokens_field_from_dsh_yml_names_the_cap_on_the_wire(
    provider: str, setting: str, field: str, other: str
) -> None:
    body = await sent(provider, setting)
    assert body[field] == 321
    assert other not in body


async def test_a_misspelt_max_tokens_field_names_the_line_and_the_value_meant() -> None:
    extra = "    max_tokens_field: max_completion_token\n"
    text = config("http://127.0.0.1:9/v1", "openai-compatible", extra)
    with pytest.raises(ConfigError) as caught:
        async with Harness(config_text=text, load_entry_points=False):
            pass
    assert (caught.value.source, caught.value.path) == (
        "<string>:8:5",
        "models.wire.max_tokens_field",
    )
    assert caught.value.reason == (
        "Input should be 'max_tokens' or 'max_completion_tokens'; "
        "did you mean 'max_completion_tokens'?"
    )


async def test_a_misspelt_key_is_told_the_key_meant() -> None:
    text = config("http://127.0.0.1:9/v1", "openai-compatible", "    max_token_field: max_tokens\n")
    with pytest.raises(ConfigError) as caught:
        async with Harness(config_text=text, load_entry_points=False):
            pass
    assert caught.value.path == "models.wire.max_token_field"
    assert "max_tokens_field" in caught.value.reason


async def test_max_tokens_field_on_an_anthropic_model_is_refused_where_it_stands() -> None:
    text = config("http://127.0.0.1:9/v1", "anthropic", "    max_tokens_field: max_tokens\n")
    with pytest.raises(ConfigError) as caught:
        async with Harness(config_text=text, load_entry_points=False):
            pass
    assert (caught.value.source, caught.value.path) == (
        "<string>:8:5",
        "models.wire.max_tokens_field",
    )
    assert caught.value.reason == (
        "applies only to OpenAI-compatible providers (openai-compatible, openai, deepseek), "
        "not 'anthropic'"
    )
