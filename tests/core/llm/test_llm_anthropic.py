"""The Anthropic Messages adapter against recorded wire streams on a loopback server."""

from __future__ import annotations

from typing import Any

import pytest
from llm_wire import WireServer, by_event, collect, every, recorded, sse

from dsh.config import ModelConfig
from dsh.llm import Finish, ReasoningDelta, ToolCallDelta, UsageChunk
from dsh.llm.anthropic import ANTHROPIC_VERSION, AnthropicModel
from dsh.messages import (
    AssistantMessage,
    ModelRequest,
    ReasoningBlock,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)

ASK = ModelRequest(
    system="You are terse.",
    messages=(UserMessage(content="weather in SF?"),),
    tools=(ToolSpec(name="get_weather", description="Weather now."),),
)
SIGNATURE = (
    "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds5FjPqK3xPLqm0bLfyn7g6GqTlm3Ra5Zx1UyCc2X"
    "2kLHN8Fpzl4E"
)


def model(url: str, **settings: Any) -> AnthropicModel:
    config = ModelConfig(provider="anthropic", model="claude-x", base_url=url, **settings)
    return AnthropicModel("claude", config, env={"ANT_KEY": "sk-ant-wire"}, backoff=0.01)


@pytest.mark.parametrize("split", ["event", "11 bytes"])
async def test_thinking_text_and_a_tool_use_with_input_json_deltas(split: str) -> None:
    body = recorded("anthropic_thinking_tool_use.sse")
    pieces = by_event(body) if split == "event" else every(body, 11)
    async with WireServer([sse(pieces)]) as server:
        chunks, message = await collect(model(server.url, api_key_env="ANT_KEY"), ASK)
    assert message.content == (
        ReasoningBlock(
            text="The user wants the weather in San Francisco. I will call get_weather.",
            signature=SIGNATURE,
        ),
        TextBlock(text="I'll check the weather for you."),
        ToolCall(
            id="toolu_01T1x1fJ34qAmk2tNTrN7Up6",
            name="get_weather",
            arguments='{"location": "San Francisco, CA", "unit": "fahrenheit"}',
        ),
    )
    assert message.stop_reason == "tool_calls"
    # input_tokens is the whole prompt: fresh + cache read + cache written
    assert message.usage == Usage(
        input_tokens=472 + 1800 + 120,
        output_tokens=89,
        cache_read_tokens=1800,
        cache_write_tokens=120,
    )
    assert ReasoningDelta("", signature=SIGNATURE) in chunks
    assert ToolCallDelta(0, id="toolu_01T1x1fJ34qAmk2tNTrN7Up6", name="get_weather") in chunks
    assert sum(isinstance(c, UsageChunk) for c in chunks) == 1
    assert chunks[-1] == Finish("tool_calls")
    sent = server.requests[0]
    assert (sent.method, sent.path) == ("POST", "/v1/messages")
    assert sent.headers["x-api-key"] == "sk-ant-wire"
    assert sent.headers["anthropic-version"] == ANTHROPIC_VERSION
    assert "authorization" not in sent.headers
    assert sent.json() == {
        "model": "claude-x",
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "weather in SF?"}]}],
        "stream": True,
        "system": "You are terse.",
        "tools": [
            {
                "name": "get_weather",
                "description": "Weather now.",
                "input_schema": {"type": "object"},
            }
        ],
    }


async def test_stop_reason_max_tokens() -> None:
    async with WireServer([sse(recorded("anthropic_max_tokens.sse"))]) as server:
        _, message = await collect(model(server.url, max_output_tokens=5), ASK)
    assert (message.text, message.stop_reason) == ("Here is a very long", "max_tokens")
    assert message.usage == Usage(input_tokens=25, output_tokens=5)
    assert server.requests[0].json()["max_tokens"] == 5


def test_history_mapping_merges_results_and_keeps_only_signed_thinking() -> None:
    history = (
        UserMessage(content="two things"),
        AssistantMessage(
            content=(
                ReasoningBlock(text="plan", signature="sig-1"),
                ReasoningBlock(text="from another provider"),
                TextBlock(text=""),
                ToolCall(id="t1", name="a", arguments='{"x": 1}'),
                ToolCall(id="t2", name="b", arguments="not json"),
            ),
            stop_reason="tool_calls",
        ),
        ToolResultMessage(call_id="t1", name="a", content="one"),
        UserMessage(content="also, hurry"),  # steering that arrived during the tools
        ToolResultMessage(call_id="t2", name="b", content="bad arguments", is_error=True),
    )
    body = model("http://x/v1").request_body(
        ModelRequest(messages=history, max_tokens=64, options={"temperature": 0})
    )
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "two things"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "plan", "signature": "sig-1"},
                {"type": "tool_use", "id": "t1", "name": "a", "input": {"x": 1}},
                {"type": "tool_use", "id": "t2", "name": "b", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "one"},
                {
                    "type": "tool_result",
                    "tool_use_id": "t2",
                    "content": "bad arguments",
                    "is_error": True,
                },
                {"type": "text", "text": "also, hurry"},
            ],
        },
    ]
    assert (body["max_tokens"], body["temperature"]) == (64, 0)
    assert "system" not in body
