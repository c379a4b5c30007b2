"""Anthropic streams found by a review of the HTTP adapters (s45).

Two ``tool_use`` blocks at the same content-block index (a server that numbers blocks
again from 0, or reuses a finished block's index) are two calls: each block's start gets
a call index of dsh's own, and its pieces go to it. Before, the server's index was the
call's, and the second call overwrote the first's id and name and joined the two inputs
(``ToolCall(id='tu_2', name='g', arguments='{"a":1}{"b":2}')``). A piece of input for a
block that has ended, or never started, belongs to no call: MALFORMED_RESPONSE.

The counts of ``message_start`` are the answer's usage when no ``message_delta`` comes
(before: dropped, the usage all 0), and counted once when one does."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_wire import WireServer, collect, sse

from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.llm import UsageChunk
from dsh.llm.anthropic import AnthropicModel
from dsh.messages import ModelRequest, TextBlock, ToolCall, Usage, UserMessage

ASK = ModelRequest(messages=(UserMessage(content="hi"),))
KEY = "sk-ant-index-reuse"


def model(url: str) -> AnthropicModel:
    config = ModelConfig(provider="anthropic", model="claude-x", base_url=url)
    return AnthropicModel("claude", config, env={"ANTHROPIC_API_KEY": KEY})


def event(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


def begin(usage: dict[str, Any] | None = None) -> bytes:
    counts = {"input_tokens": 5} if usage is None else usage
    return event({"type": "message_start", "message": {"usage": counts}})


def start(index: int, block: dict[str, Any]) -> bytes:
    return event({"type": "content_block_start", "index": index, "content_block": block})


def piece(index: int, text: str) -> bytes:
    delta = {"type": "input_json_delta", "partial_json": text}
    return event({"type": "content_block_delta", "index": index, "delta": delta})


def stop(index: int) -> bytes:
    return event({"type": "content_block_stop", "index": index})


def tool_use(call_id: str, name: str, given: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": given or {}}


END_DELTA = event({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}})
STOP = event({"type": "message_stop"})


async def test_two_tool_use_blocks_streamed_at_one_index_are_two_calls() -> None:
    body = (
        begin()
        + start(0, tool_use("tu_1", "f"))
        + piece(0, '{"a":1}')
        + stop(0)
        + start(0, tool_use("tu_2", "g"))
        + piece(0, '{"b":2}')
        + stop(0)
        + END_DELTA
        + STOP
    )
    async with WireServer([sse(body)]) as server:
        _, message = await collect(model(server.url), ASK)
    assert message.content == (
        ToolCall(id="tu_1", name="f", arguments='{"a":1}'),
        ToolCall(id="tu_2", name="g", arguments='{"b":2}'),
    )


async def test_two_tool_use_blocks_whole_in_their_starts_at_one_index_are_two_calls() -> None:
    body = (
        begin()
        + start(0, tool_use("tu_1", "f", {"a": 1}))
        + stop(0)
        + start(0, tool_use("tu_2", "g", {"b": 2}))
        + stop(0)
        + END_DELTA
        + STOP
    )
    async with WireServer([sse(body)]) as server:
        _, message = await collect(model(server.url), ASK)
    assert message.content == (
        ToolCall(id="tu_1", name="f", arguments='{"a": 1}'),
        ToolCall(id="tu_2", name="g", arguments='{"b": 2}'),
    )


async def test_interleaved_tool_use_blocks_keep_their_own_pieces() -> None:
    text = {"type": "text", "text": "ok"}
    body = begin() + start(0, text) + stop(0) + start(1, tool_use("tu_1", "f"))
    body += start(2, tool_use("tu_2", "g")) + piece(2, '{"b":') + piece(1, '{"a":1}')
    body += piece(2, "2}") + stop(1) + stop(2) + END_DELTA + STOP
    async with WireServer([sse(body)]) as server:
        _, message = await collect(model(server.url), ASK)
    assert message.content == (
        TextBlock(text="ok"),
        ToolCall(id="tu_1", name="f", arguments='{"a":1}'),
        ToolCall(id="tu_2", name="g", arguments='{"b":2}'),
    )


@pytest.mark.parametrize(
    "blocks",
    [
        pytest.param(piece(3, '{"a":1}'), id="never-started"),
        pytest.param(start(0, tool_use("tu_1", "f")) + stop(0) + piece(0, "{}"), id="ended"),
    ],
)
async def test_input_for_no_open_tool_use_block_is_malformed(blocks: bytes) -> None:
    async with WireServer([sse(begin() + blocks + END_DELTA + STOP)]) as server:
        with pytest.raises(ModelError) as caught:
            await collect(model(server.url), ASK)
    assert caught.value.code == "MALFORMED_RESPONSE"
    assert caught.value.message.startswith("model 'claude': unreadable event ")
    assert "(ValueError: no tool_use block is open at its index " in caught.value.message


# -- usage -------------------------------------------------------------------------------


COUNTS = {"input_tokens": 10, "output_tokens": 3, "cache_read_input_tokens": 4}
TEXT = start(0, {"type": "text", "text": "hi"}) + stop(0)


async def test_message_start_counts_are_the_usage_without_a_message_delta() -> None:
    async with WireServer([sse(begin(COUNTS) + TEXT + STOP)]) as server:
        chunks, message = await collect(model(server.url), ASK)
    assert message.usage == Usage(input_tokens=14, output_tokens=3, cache_read_tokens=4)
    assert sum(isinstance(c, UsageChunk) for c in chunks) == 1


async def test_message_start_counts_with_a_message_delta_are_counted_once() -> None:
    later = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}
    later["usage"] = {"output_tokens": 9}
    async with WireServer([sse(begin(COUNTS) + TEXT + event(later) + STOP)]) as server:
        chunks, message = await collect(model(server.url), ASK)
    assert message.usage == Usage(input_tokens=14, output_tokens=9, cache_read_tokens=4)
    assert sum(isinstance(c, UsageChunk) for c in chunks) == 1


async def test_message_start_counts_stay_with_an_answer_cut_before_message_stop() -> None:
    got: list[object] = []

    async def read(cut: AnthropicModel) -> None:
        async for chunk in cut.stream(ASK):
            got.append(chunk)

    async with WireServer([sse(begin(COUNTS) + TEXT)]) as server, model(server.url) as cut:
        with pytest.raises(ModelError) as caught:
            await read(cut)
    assert caught.value.code == "STREAM_CLOSED"
    assert got[-1] == UsageChunk(Usage(input_tokens=14, output_tokens=3, cache_read_tokens=4))
