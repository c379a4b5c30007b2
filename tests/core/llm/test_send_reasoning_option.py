"""``send_reasoning`` (reasoning sent back as ``reasoning_content``, DeepSeek's thinking
mode) set from dsh.yml, as ``models.<name>.send_reasoning``: it was a constructor
argument of the OpenAI-compatible adapter only, so a dsh.yml could not turn it off for
a server that refuses the field, nor on for ``provider: openai`` pointed at a server
that needs it. Real turns over the loopback server; the second request shows what went
back."""

from __future__ import annotations

import pytest
from llm_wire import WireServer, sse
from read_tool import CALLS, Tools
from test_providers_study_openai import DONE, answer, call, chunk, think

from dsh.errors import ConfigError
from dsh.harness import Harness
from dsh.testing import check_invariants, run_turn


def config(url: str, provider: str, extra: str = "") -> str:
    return (
        f"models:\n  wire:\n    provider: {provider}\n    model: m\n"
        f"    base_url: {url}\n    api_key_env: DSH_WIRE_KEY\n{extra}"
        "agents:\n  - id: main\n    model: wire\n"
    )


async def sent_back(provider: str, extra: str) -> list[dict[str, object]]:
    """The assistant messages of the request after a reasoned tool call."""
    calls = think("Read a.") + chunk(call("call_a", '{"path": "a"}')) + chunk({}, "tool_calls")
    replies = [sse(calls + DONE), sse(answer("a read."))]
    CALLS.clear()
    async with WireServer(replies) as server:
        text = config(server.url, provider, extra)
        plugins = [("tools", Tools())]
        env = {"DSH_WIRE_KEY": "sk-wire"}
        async with Harness(
            config_text=text, plugins=plugins, load_entry_points=False, env=env
        ) as h:
            agent = h.agents.get("main")
            assert agent is not None
            events = await run_turn(agent, "read a")
            check_invariants(agent.session.events)
        assert events[-1].data["reason"] == "completed"
        assert CALLS == ["a"]
        return [m for m in server.requests[1].json()["messages"] if m["role"] == "assistant"]


@pytest.mark.parametrize(
    ("provider", "setting", "sent"),
    [
        ("deepseek", "", True),  # the provider's default: on
        ("deepseek", "    send_reasoning: false\n", False),
        ("openai", "", False),  # the provider's default: off
        ("openai", "    send_reasoning: true\n", True),
    ],
)
async def test_send_reasoning_from_dsh_yml_decides_what_goes_back(
    provider: str, setting: str, sent: bool
) -> None:
    (message,) = await sent_back(provider, setting)
    assert ("reasoning_content" in message) is sent
    if sent:
        assert message["reasoning_content"] == "Read a."


@pytest.mark.parametrize("value", ["maybe", '"false"', "0"])
async def test_a_send_reasoning_that_is_not_a_boolean_names_the_file_line_and_key(
    value: str,
) -> None:
    text = config("http://127.0.0.1:9/v1", "openai-compatible", f"    send_reasoning: {value}\n")
    with pytest.raises(ConfigError) as caught:
        async with Harness(config_text=text, load_entry_points=False):
            pass
    assert caught.value.path == "models.wire.send_reasoning"
    assert caught.value.source == "<string>:7:5"
    assert "valid boolean" in caught.value.reason


async def test_send_reasoning_on_an_anthropic_model_is_refused_where_it_stands() -> None:
    text = config("http://127.0.0.1:9/v1", "anthropic", "    send_reasoning: true\n")
    with pytest.raises(ConfigError) as caught:
        async with Harness(config_text=text, load_entry_points=False):
            pass
    assert (caught.value.source, caught.value.path) == (
        "<string>:7:5",
        "models.wire.send_reasoning",
    )
    assert caught.value.reason == (
        "applies only to OpenAI-compatible providers (openai-compatible, openai, deepseek), "
        "not 'anthropic'"
    )
