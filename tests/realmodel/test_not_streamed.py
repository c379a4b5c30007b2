"""A whole JSON answer to a request that asked for a stream (a proxy that ignores
``stream: true``), from a real llama-server: asked here with ``stream: false``, it
answers ``application/json`` in each protocol's shape, and dsh reads it as the answer
it streams (docs/models.md, "An answer that is not labelled an event stream").

Before: MALFORMED_RESPONSE ("expected a text/event-stream answer ... got
'application/json; charset=utf-8' ...").
"""

from __future__ import annotations

import json
from contextlib import aclosing

import anyio
import pytest
from realmodel_support import Peer
from test_turns import ASK_WEATHER, PROTOCOLS, get_weather, make_model

from dsh.llm import Assembler, UsageChunk
from dsh.messages import AssistantMessage, ModelRequest, UserMessage

LIMIT = 60.0  # seconds; an answer here takes a few


async def whole(
    protocol: str, peer: Peer, *, tools: bool = True, **options: object
) -> tuple[AssistantMessage, int]:
    """The answer to ASK_WEATHER, the server asked not to stream, and its usage chunks."""
    model = make_model(protocol, peer)
    request = ModelRequest(
        messages=(UserMessage(content=ASK_WEATHER),),
        tools=(get_weather.spec,) if tools else (),
        options={"temperature": 0, "stream": False, **options},
    )
    assembler, counted = Assembler(), 0
    async with model:
        with anyio.fail_after(LIMIT):
            async with aclosing(model.stream(request)) as stream:
                async for chunk in stream:
                    assembler.add(chunk)
                    counted += isinstance(chunk, UsageChunk)
    return assembler.message(), counted


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_whole_json_answer_is_read_as_the_answer(protocol: str, peer: Peer) -> None:
    message, counted = await whole(protocol, peer)
    assert message.stop_reason == "tool_calls"
    [call] = message.tool_calls
    assert call.name == "get_weather" and call.id
    assert isinstance(json.loads(call.arguments), dict)
    assert counted == 1 and message.usage.input_tokens > 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_whole_answer_cut_by_max_tokens_is_max_tokens(protocol: str, peer: Peer) -> None:
    message, _ = await whole(protocol, peer, max_tokens=2, tools=False)
    assert message.stop_reason == "max_tokens"
    assert message.usage.output_tokens == 2
