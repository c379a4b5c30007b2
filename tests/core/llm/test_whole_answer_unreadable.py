"""A whole JSON answer (a server that ignores ``stream: true``) with a field dsh cannot
read: MALFORMED_RESPONSE names the field of the whole answer and quotes it as the server
sent it. Before: it said "unreadable chunk" and quoted the chunk dsh had rebuilt from
the answer (``{"choices": [{"delta": ...}]}``, Anthropic's ``content_block_start``),
which the server never sent (docs/models.md, "An answer that is not labelled an event
stream")."""

from __future__ import annotations

import json
from typing import Any

from llm_wire import Reply, WireServer
from test_llm_http import anthropic, fails, openai

from dsh.errors import ModelError


def _whole(payload: dict[str, Any]) -> Reply:
    return Reply(200, json.dumps(payload).encode(), {"content-type": "application/json"})


async def _openai_error(payload: dict[str, Any]) -> ModelError:
    async with WireServer([_whole(payload)]) as server:
        return await fails(openai(server.url, max_retries=0))


async def _anthropic_error(payload: dict[str, Any]) -> ModelError:
    async with WireServer([_whole(payload)]) as server:
        return await fails(anthropic(server.url, max_retries=0))


async def test_an_openai_choice_that_cannot_be_read_is_quoted_as_the_server_sent_it() -> None:
    bad = {"index": 0, "message": {"role": "assistant", "content": 5}, "finish_reason": "stop"}
    found = await _openai_error({"object": "chat.completion", "choices": [bad]})
    assert found.code == "MALFORMED_RESPONSE"
    assert "unreadable choices[0] of the whole JSON answer" in found.message
    assert repr(json.dumps(bad)) in found.message
    assert "chunk" not in found.message
    assert "delta" not in found.message  # dsh's own rebuilding, never sent
    assert "its content is neither text nor a list of parts" in found.message


async def test_the_second_choice_is_named_by_its_place() -> None:
    good = {"index": 0, "message": {"content": "hi"}}
    bad = {"message": {"content": "hi"}, "finish_reason": 7}  # no index: read too
    found = await _openai_error({"choices": [good, bad]})
    assert "unreadable choices[1] of the whole JSON answer" in found.message
    assert repr(json.dumps(bad)) in found.message


async def test_an_anthropic_block_that_cannot_be_read_is_quoted_as_the_server_sent_it() -> None:
    payload = {  # redacted_thinking without its data: not a block that can be read
        "type": "message",
        "content": [{"type": "text", "text": "hi"}, {"type": "redacted_thinking"}],
        "stop_reason": "end_turn",
    }
    found = await _anthropic_error(payload)
    assert found.code == "MALFORMED_RESPONSE"
    assert "unreadable content[1] of the whole JSON answer" in found.message
    assert repr(json.dumps({"type": "redacted_thinking"})) in found.message
    assert "content_block_start" not in found.message
    assert "event" not in found.message


async def test_an_anthropic_stop_reason_that_is_not_text_is_quoted() -> None:
    payload = {"type": "message", "content": [], "stop_reason": 5}
    found = await _anthropic_error(payload)
    assert "unreadable stop_reason of the whole JSON answer '5'" in found.message
    assert "its stop_reason is not text" in found.message
