"""A streamed request's 2xx answer that is not labelled an event stream, or not
streamed at all (docs/models.md, "An answer that is not labelled an event stream").

- An event stream sent as ``application/octet-stream``, ``text/plain`` or with no
  Content-Type (some proxies and gateways relabel it) is read by its start: a body that
  starts with ``data:``, ``event:`` (or another field, or a comment) is an event stream.
- A whole JSON answer (HTTP 200, ``application/json``: a proxy or server that ignores
  ``stream: true``) is the answer: OpenAI's ``chat.completion`` (``choices[].message``)
  and Anthropic's ``message`` (``content`` blocks), with their stop reasons and usage.
- Anything else is MALFORMED_RESPONSE saying what came (its type, its start, escaped)
  and what was expected.

Before: each of the first two was MALFORMED_RESPONSE ("expected a text/event-stream
answer ... got 'application/octet-stream' ..."), the answer lost.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_wire import Reply, WireServer, collect, every, recorded
from test_llm_http import ASK, KEY, TEXT, anthropic, fails, openai

from dsh.llm import UsageChunk

ANTHROPIC = recorded("anthropic_max_tokens.sse")


def _usage(chunks: list[Any]) -> list[tuple[int, int]]:
    return [
        (c.usage.input_tokens, c.usage.output_tokens) for c in chunks if isinstance(c, UsageChunk)
    ]


def _reasoning(message: Any) -> list[tuple[str, str | None]]:
    return [(b.text, b.signature) for b in message.content if b.type == "reasoning"]


def _labelled(body: bytes | list[bytes], kind: str | None) -> Reply:
    return Reply(200, body, {} if kind is None else {"content-type": kind})


@pytest.mark.parametrize("kind", ["application/octet-stream", "text/plain", None])
async def test_an_event_stream_under_another_type_is_read(kind: str | None) -> None:
    async with WireServer([_labelled(every(TEXT, 7), kind)]) as server:
        _, message = await collect(openai(server.url), ASK)
        assert message.text and message.stop_reason == "stop"
    async with WireServer([_labelled(every(ANTHROPIC, 5), kind)]) as server:
        _, message = await collect(anthropic(server.url), ASK)
    assert (message.text, message.stop_reason) == ("Here is a very long", "max_tokens")


async def test_a_stream_that_starts_with_a_comment_is_an_event_stream() -> None:
    async with WireServer([_labelled([b": keep-alive\n\n", TEXT], None)]) as server:
        _, message = await collect(openai(server.url), ASK)
    assert message.text


OPENAI_ANSWER = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "Let me look. \U0001f600",
                "reasoning_content": "the file first",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read", "arguments": '{"path": "a.txt"}'},
                    }
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 12, "completion_tokens": 9, "total_tokens": 21},
}


async def test_a_whole_openai_json_answer_is_the_answer() -> None:
    async with WireServer(
        [_labelled(json.dumps(OPENAI_ANSWER).encode(), "application/json")]
    ) as server:
        chunks, message = await collect(openai(server.url), ASK)
    assert message.text == "Let me look. \U0001f600"
    assert _reasoning(message) == [("the file first", None)]
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        ("call_1", "read", '{"path": "a.txt"}')
    ]
    assert message.stop_reason == "tool_calls"
    assert _usage(chunks) == [(12, 9)]


async def test_a_whole_openai_answer_cut_by_its_limit_is_max_tokens() -> None:
    cut = {"choices": [{"message": {"content": "Once upon"}, "finish_reason": "length"}]}
    async with WireServer([_labelled(json.dumps(cut).encode(), "application/json")]) as server:
        chunks, message = await collect(openai(server.url), ASK)
    assert (message.text, message.stop_reason) == ("Once upon", "max_tokens")
    assert _usage(chunks) == []  # none sent: none counted


ANTHROPIC_ANSWER = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude",
    "content": [
        {"type": "thinking", "thinking": "look first", "signature": "sig"},
        {"type": "text", "text": "Reading it."},
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.txt"}},
        {"type": "tool_use", "id": "toolu_2", "name": "now", "input": {}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 30, "output_tokens": 11, "cache_read_input_tokens": 4},
}


async def test_a_whole_anthropic_json_answer_is_the_answer() -> None:
    body = json.dumps(ANTHROPIC_ANSWER).encode()
    async with WireServer([_labelled(body, "application/json")]) as server:
        chunks, message = await collect(anthropic(server.url), ASK)
    assert message.text == "Reading it."
    assert _reasoning(message) == [("look first", "sig")]
    assert [(c.id, c.name, json.loads(c.arguments)) for c in message.tool_calls] == [
        ("toolu_1", "read", {"path": "a.txt"}),
        ("toolu_2", "now", {}),
    ]
    assert message.stop_reason == "tool_calls"
    assert _usage(chunks) == [(34, 11)]


async def test_the_other_shape_is_malformed_saying_what_came_and_what_was_expected() -> None:
    # an OpenAI answer to an Anthropic request: not read as one
    body = json.dumps(OPENAI_ANSWER).encode()
    async with WireServer([_labelled(body, "application/json")]) as server:
        err = await fails(anthropic(server.url))
    assert err.code == "MALFORMED_RESPONSE"
    assert "application/json" in err.message
    assert '{"id": "chatcmpl-1"' in err.message
    assert "expected a text/event-stream answer" in err.message
    assert "a whole JSON message" in err.message


async def test_a_binary_body_is_quoted_escaped_and_the_key_hidden() -> None:
    body = b"\x00\x01\xffbinary " + KEY.encode() + b" \x1b[31m"
    async with WireServer([_labelled(body, "application/octet-stream")]) as server:
        err = await fails(openai(server.url))
    assert err.code == "MALFORMED_RESPONSE"
    assert "'application/octet-stream'" in err.message
    assert "\\x00\\x01" in err.message and "\x1b" not in err.message


async def test_a_whole_answer_under_no_content_type_is_read() -> None:
    body = json.dumps(ANTHROPIC_ANSWER).encode()
    async with WireServer([_labelled(body, None)]) as server:
        _, message = await collect(anthropic(server.url), ASK)
    assert message.text == "Reading it."


async def test_a_stream_of_json_lines_is_not_read_to_its_end() -> None:
    # Ollama's own API (/api/chat): a line a moment, for as long as the answer takes;
    # quoted after its start, not waited for until the read timeout
    line = b'{"message": {"content": "hi"}, "done": false}\n'
    reply = Reply(200, [line] * 3, {"content-type": "application/x-ndjson"}, then="stall")
    async with WireServer([reply]) as server:
        err = await fails(openai(server.url, read_timeout=30))
    assert err.code == "MALFORMED_RESPONSE"
    assert "application/x-ndjson" in err.message


@pytest.mark.parametrize("kind", ["text/html; charset=utf-8", "text/plain", None])
async def test_a_web_page_says_where_the_request_went(kind: str | None) -> None:
    # a base_url that names a web UI, a login page or a portal: the likely mistake is
    # the address, not the server's streaming
    page = b"\n<!DOCTYPE html><html><head><title>Open WebUI</title>"
    async with WireServer([_labelled(page, kind)]) as server:
        err = await fails(openai(server.url))
    assert err.code == "MALFORMED_RESPONSE"
    assert "a web page: is base_url the API's address?" in err.message
    assert "requests go to base_url + /chat/completions" in err.message
    assert "does the server stream" not in err.message
