"""An Anthropic ``tool_use`` block without an ``id`` (or a ``name``) is
MALFORMED_RESPONSE with the assembler's message, as an OpenAI-compatible call without a
name is: Anthropic's API always sends both, and a server that does not is not read as
it (no id of dsh's own is made here).

Before: ``unreadable event '...' (KeyError: 'id')``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_wire import WireServer, collect, sse

from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.llm.anthropic import AnthropicModel
from dsh.messages import ModelRequest, UserMessage

ASK = ModelRequest(messages=(UserMessage(content="hi"),))


def events(block: dict[str, Any]) -> bytes:
    items = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 5}}},
        {"type": "content_block_start", "index": 0, "content_block": block},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}},
        {"type": "message_stop"},
    ]
    return b"".join(b"data: %s\n\n" % json.dumps(item).encode() for item in items)


@pytest.mark.parametrize(
    "block",
    [
        {"type": "tool_use", "name": "read", "input": {"path": "x"}},
        {"type": "tool_use", "id": "toolu_1", "input": {}},
    ],
)
async def test_a_tool_use_without_an_id_or_a_name_is_malformed(block: dict[str, Any]) -> None:
    async with WireServer([sse(events(block))]) as server:
        config = ModelConfig(provider="anthropic", model="c", base_url=server.url)
        with pytest.raises(ModelError) as caught:
            await collect(AnthropicModel("anthropic", config), ASK)
    assert caught.value.code == "MALFORMED_RESPONSE"
    assert "a streamed tool call has no id or no name" in caught.value.message
    assert "KeyError" not in caught.value.message
