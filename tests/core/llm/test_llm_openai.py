"""The OpenAI-compatible adapter against recorded wire streams on a loopback server."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_wire import WireServer, by_event, collect, every, recorded, sse

from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.llm import Finish, ReasoningDelta, TextDelta, ToolCallDelta, UsageChunk
from dsh.llm.openai import OpenAICompatibleModel
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

ASK = ModelRequest(messages=(UserMessage(content="weather in Hangzhou?"),))


def model(url: str, provider: str = "openai-compatible", **settings: Any) -> OpenAICompatibleModel:
    config = ModelConfig(provider=provider, model="wire-model", base_url=url, **settings)
    return OpenAICompatibleModel("wire", config, env={"WIRE_KEY": "sk-wire-123"}, backoff=0.01)


async def test_deepseek_reasoning_then_a_tool_call_in_fragments() -> None:
    async with WireServer([sse(by_event(recorded("deepseek_reasoning_tool_call.sse")))]) as server:
        chunks, message = await collect(model(server.url, api_key_env="WIRE_KEY"), ASK)
    reasoning = "".join(c.text for c in chunks if isinstance(c, ReasoningDelta))
    assert reasoning == (
        'The user asks for the weather in Hangzhou. I should call get_weather with city="Hangzhou".'
    )
    assert next(c for c in chunks if isinstance(c, ToolCallDelta)) == ToolCallDelta(
        0, id="call_00_Xk3Rz9pLqWm2", name="get_weather"
    )
    assert message.content == (
        ReasoningBlock(text=reasoning),
        ToolCall(
            id="call_00_Xk3Rz9pLqWm2",
            name="get_weather",
            arguments='{"city":"Hangzhou","unit":"celsius"}',
        ),
    )
    assert message.stop_reason == "tool_calls"
    # the cache hit is counted; input_tokens is the whole prompt
    assert message.usage == Usage(input_tokens=412, output_tokens=87, cache_read_tokens=384)
    assert chunks[-1] == Finish("tool_calls")
    sent = server.requests[0]
    assert (sent.method, sent.path) == ("POST", "/v1/chat/completions")
    assert sent.headers["authorization"] == "Bearer sk-wire-123"
    body = sent.json()
    assert body["model"] == "wire-model"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [{"role": "user", "content": "weather in Hangzhou?"}]


@pytest.mark.parametrize("split", ["event", "7 bytes", "1 byte"])
async def test_parallel_tool_calls_assemble_by_index_however_the_bytes_are_cut(split: str) -> None:
    body = recorded("openai_parallel_tool_calls.sse")
    pieces = by_event(body) if split == "event" else every(body, int(split.split()[0]))
    async with WireServer([sse(pieces)]) as server:
        chunks, message = await collect(model(server.url), ASK)
    assert message.text == "Let me look."
    # raw argument text is kept exactly as the model sent it
    assert message.tool_calls == [
        ToolCall(id="call_Qx1fT8mWc0aVb2", name="read_file", arguments='{"path": "src/main.py"}'),
        ToolCall(
            id="call_Lm9pZ4rTy7uE3s", name="list_dir", arguments='{"path": "tests", "depth": 2}'
        ),
    ]
    assert message.usage == Usage(input_tokens=1234, output_tokens=56, cache_read_tokens=1024)
    assert message.stop_reason == "tool_calls"
    assert sum(isinstance(c, UsageChunk) for c in chunks) == 1


async def test_text_with_crlf_lines_and_characters_cut_across_pieces() -> None:
    body = recorded("llamacpp_text_crlf.sse")
    assert b"\r\n" in body
    async with WireServer([sse(every(body, 5))]) as server:
        chunks, message = await collect(model(server.url), ASK)
    assert [c.text for c in chunks if isinstance(c, TextDelta)] == [
        "Voilà",
        ": 3 ",
        "× 4 = ",  # noqa: RUF001
        "12 ✓",
        "\n",
    ]
    assert message.stop_reason == "stop"
    assert message.usage == Usage(input_tokens=31, output_tokens=9)


async def test_finish_reason_length_is_max_tokens() -> None:
    async with WireServer([sse(recorded("openai_length.sse"))]) as server:
        _, message = await collect(model(server.url), ASK)
    assert (message.text, message.stop_reason) == ("Once upon a", "max_tokens")


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    data = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(data).encode() + b"\n\n"


async def test_a_server_that_reuses_index_0_for_every_call_still_gives_two_calls() -> None:
    def call(call_id: str, name: str, args: str) -> dict[str, Any]:
        function = {"name": name, "arguments": args}
        return {"tool_calls": [{"index": 0, "id": call_id, "function": function}]}

    body = [
        chunk(call("a", "one", '{"x":')),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": " 1}"}}]}),
        chunk(call("b", "two", "{}")),
        chunk({}, "stop"),  # some servers say "stop" after tool calls
        b"data: [DONE]\n\n",
    ]
    async with WireServer([sse(body)]) as server:
        _, message = await collect(model(server.url), ASK)
    assert message.tool_calls == [
        ToolCall(id="a", name="one", arguments='{"x": 1}'),
        ToolCall(id="b", name="two", arguments="{}"),
    ]
    assert message.stop_reason == "tool_calls"


async def test_an_error_object_inside_the_stream_raises_its_code() -> None:
    error = {"error": {"code": 500, "message": "slot unavailable", "type": "server_error"}}
    body = [chunk({"content": "par"}), b"data: " + json.dumps(error).encode() + b"\n\n"]
    async with WireServer([sse(body)]) as server:
        with pytest.raises(ModelError) as caught:
            await collect(model(server.url), ASK)
    assert caught.value.code == "SERVER"
    assert "slot unavailable" in caught.value.message


HISTORY = (
    UserMessage(content="weather?"),
    AssistantMessage(
        content=(
            ReasoningBlock(text="need a tool"),
            TextBlock(text="Checking."),
            ToolCall(id="c1", name="get_weather", arguments='{"city": "Hangzhou"}'),
        ),
        stop_reason="tool_calls",
    ),
    ToolResultMessage(call_id="c1", name="get_weather", content="24°C"),
    AssistantMessage(content=(ReasoningBlock(text="done thinking"), TextBlock(text="24°C."))),
    UserMessage(content="thanks"),
)
TOOLS = (
    ToolSpec(name="get_weather", description="Weather now.", parameters={"type": "object"}),
    ToolSpec(name="noop"),
)


def test_request_mapping_sends_the_reasoning_of_an_exchange_with_tool_calls() -> None:
    request = ModelRequest(
        system="Be brief.",
        messages=HISTORY,
        tools=TOOLS,
        max_tokens=256,
        options={"temperature": 0.2},
    )
    body = model("http://x/v1", provider="deepseek").request_body(request)
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Hangzhou"}'},
                }
            ],
            "reasoning_content": "need a tool",
        },
        {"role": "tool", "tool_call_id": "c1", "content": "24°C"},
        # the answer after the calls too: DeepSeek's rule is the whole exchange
        {"role": "assistant", "content": "24°C.", "reasoning_content": "done thinking"},
        {"role": "user", "content": "thanks"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object"},
                "description": "Weather now.",
            },
        },
        {"type": "function", "function": {"name": "noop", "parameters": {"type": "object"}}},
    ]
    assert body["max_tokens"] == 256
    assert body["temperature"] == 0.2


def test_openai_itself_gets_max_completion_tokens_and_no_reasoning() -> None:
    request = ModelRequest(messages=HISTORY)
    body = model("http://x/v1", provider="openai", max_output_tokens=100).request_body(request)
    assert body["max_completion_tokens"] == 100
    assert "max_tokens" not in body
    assert all("reasoning_content" not in m for m in body["messages"])
    # an assistant turn with only tool calls sends content null; with no reasoning in
    # its exchange (a model that does not think), no reasoning_content at all
    only_call = AssistantMessage(content=(ToolCall(id="c", name="n"),))
    wire = model("http://x/v1").request_body(ModelRequest(messages=(only_call,)))["messages"]
    assert wire == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "n", "arguments": "{}"}}
            ],
        }
    ]
    # one that reasoned in the exchange: the others get an empty one (DeepSeek refuses
    # a missing one)
    thought = AssistantMessage(content=(ReasoningBlock(text="hm"), ToolCall(id="d", name="n")))
    exchange = ModelRequest(messages=(thought, only_call))
    wire = model("http://x/v1").request_body(exchange)["messages"]
    assert [m["reasoning_content"] for m in wire] == ["hm", ""]
