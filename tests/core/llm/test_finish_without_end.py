"""A server that sends the whole answer (its finish and usage; Anthropic's
``message_stop``) but neither ``data: [DONE]`` nor the end of the response: the answer
is whole, and dsh does not wait for the read timeout to say it failed (found by a review
of the providers: each such answer waited ``read_timeout``, 60 s by default, then was a
TIMEOUT). A usage chunk that follows the finish is still read."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from llm_wire import WireServer, by_event, collect, openai_chunk, recorded, sse
from test_llm_http import ASK, anthropic, openai

from dsh.errors import ModelError
from dsh.llm import UsageChunk
from dsh.messages import ModelRequest, UserMessage

# below the stall's own limit (llm_wire.STALL_LIMIT): the read timeout is what failed
READ_TIMEOUT = 5.0
USAGE = {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}


def _data(chunk: dict[str, Any]) -> bytes:
    return b"data: %s\n\n" % json.dumps(chunk).encode()


def _usage_of(chunks: list[Any]) -> list[tuple[int, int]]:
    return [
        (c.usage.input_tokens, c.usage.output_tokens) for c in chunks if isinstance(c, UsageChunk)
    ]


async def _answer(pieces: list[bytes], request: ModelRequest = ASK) -> tuple[list[Any], Any]:
    """What the model makes of ``pieces``, after which the server stays silent, the
    response open; the connection is closed by dsh."""
    async with WireServer([sse(pieces, then="stall")]) as server:
        model = openai(server.url, read_timeout=READ_TIMEOUT)
        chunks, message = await collect(model, request)
        with anyio.fail_after(READ_TIMEOUT):
            await server.disconnected.wait()
    return chunks, message


async def test_the_usage_chunk_after_the_finish_ends_the_answer() -> None:
    pieces = [
        _data(openai_chunk({"content": "Hello"})),
        _data(openai_chunk({}, "stop")),
        _data({"choices": [], "usage": USAGE}),
    ]
    chunks, message = await _answer(pieces)
    assert message.text == "Hello"
    assert message.stop_reason == "stop"
    assert _usage_of(chunks) == [(7, 3)]


async def test_a_finish_with_its_usage_and_nothing_after_ends_the_answer() -> None:
    finish = {**openai_chunk({}, "stop"), "usage": USAGE}
    chunks, message = await _answer([_data(openai_chunk({"content": "Hi"})), _data(finish)])
    assert (message.text, message.stop_reason) == ("Hi", "stop")
    assert _usage_of(chunks) == [(7, 3)]


async def test_a_finish_without_usage_asked_for_ends_the_answer() -> None:
    off = ModelRequest(
        messages=(UserMessage(content="hi"),), options={"stream_options": {"include_usage": False}}
    )
    pieces = [_data(openai_chunk({"content": "Hi"})), _data(openai_chunk({}, "length"))]
    chunks, message = await _answer(pieces, off)
    assert (message.text, message.stop_reason) == ("Hi", "max_tokens")
    assert _usage_of(chunks) == []


async def test_a_usage_chunk_that_comes_a_moment_after_the_finish_is_read() -> None:
    # usage on the finish chunk (vLLM's continuous_usage_stats), the final counts after a
    # pause longer than the wait for the end after a final event (_http._DRAIN_WAIT)
    finish = {**openai_chunk({"content": "Hi"}, "stop"), "usage": {**USAGE, "prompt_tokens": 1}}
    async with WireServer(
        [sse([_data(finish), _data({"choices": [], "usage": USAGE})], pause=0.5, then="stall")]
    ) as server:
        model = openai(server.url, read_timeout=READ_TIMEOUT)
        chunks, message = await collect(model, ASK)
    assert message.text == "Hi"
    assert _usage_of(chunks) == [(1, 3), (7, 3)]


async def test_an_answer_piece_after_an_early_finish_is_still_read() -> None:
    pieces = [
        _data(openai_chunk({"content": "Hel"}, "stop")),
        _data(openai_chunk({"content": "lo"})),
    ]
    pieces.append(b"data: [DONE]\n\n")
    async with WireServer([sse(pieces, pause=0.5)]) as server:
        _, message = await collect(openai(server.url, read_timeout=READ_TIMEOUT), ASK)
    assert message.text == "Hello"


async def test_an_anthropic_message_stop_ends_the_answer() -> None:
    pieces = by_event(recorded("anthropic_max_tokens.sse"))
    async with WireServer([sse(pieces, then="stall")]) as server:
        chunks, message = await collect(anthropic(server.url, read_timeout=READ_TIMEOUT), ASK)
        with anyio.fail_after(READ_TIMEOUT):
            await server.disconnected.wait()
    assert message.stop_reason == "max_tokens"
    assert _usage_of(chunks) == [(25, 5)]


async def test_a_connection_reset_after_the_finish_keeps_the_answer() -> None:
    # the answer and its finish came: a proxy that resets rather than ends the response
    # (no [DONE]) does not make it a STREAM_CLOSED failure
    pieces = [_data(openai_chunk({"content": "Hi"})), _data(openai_chunk({}, "stop"))]
    async with WireServer([sse(pieces, then="reset")]) as server:
        _, message = await collect(openai(server.url, read_timeout=READ_TIMEOUT), ASK)
    assert (message.text, message.stop_reason) == ("Hi", "stop")


# -- Anthropic: message_delta (its stop_reason) came, message_stop did not -------------
#: the recorded answer up to its message_delta, without message_stop
UNSTOPPED = recorded("anthropic_max_tokens.sse").split(b"event: message_stop")[0]


async def test_an_anthropic_message_delta_then_a_stall_ends_the_answer() -> None:
    # before: the stall was waited for until the read timeout, then the answer failed
    async with WireServer([sse(by_event(UNSTOPPED), then="stall")]) as server:
        chunks, message = await collect(anthropic(server.url, read_timeout=READ_TIMEOUT), ASK)
        with anyio.fail_after(READ_TIMEOUT):
            await server.disconnected.wait()
    assert (message.text, message.stop_reason) == ("Here is a very long", "max_tokens")
    assert _usage_of(chunks) == [(25, 5)]


async def test_an_anthropic_message_delta_then_the_end_or_a_reset_keeps_the_answer() -> None:
    for then in ("end", "reset"):
        async with WireServer([sse(by_event(UNSTOPPED), then=then)]) as server:
            _, message = await collect(anthropic(server.url, read_timeout=READ_TIMEOUT), ASK)
        assert message.stop_reason == "max_tokens", then


async def test_an_anthropic_block_after_the_message_delta_needs_message_stop() -> None:
    # a server that sent its message_delta early: a block after it is read, and the
    # answer's end is message_stop again
    pieces = by_event(UNSTOPPED)
    block = [p.replace(b'"index":0', b'"index":1') for p in pieces[1:4]]
    async with WireServer([sse([*pieces, *block], pause=0.5)]) as server:
        with pytest.raises(ModelError) as caught:
            await collect(anthropic(server.url, read_timeout=READ_TIMEOUT), ASK)
    assert caught.value.code == "STREAM_CLOSED"
    assert "message_stop" in caught.value.message


# -- what keeps coming after the end was said: the grace runs from the end -------------
#: events after the end, each well within the grace, for far longer than the read timeout
KEPT_UP = 200
PING = b'event: ping\ndata: {"type": "ping"}\n\n'


async def test_anthropic_pings_after_the_message_delta_do_not_keep_the_answer_open(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # before: each ping began the wait for message_stop again, so a server that kept
    # pinging after the stop_reason (no message_stop) never ended the answer
    monkeypatch.setattr("dsh.llm.anthropic.FINISH_GRACE", 0.3)
    async with WireServer([sse([UNSTOPPED, *[PING] * KEPT_UP], pause=0.1)]) as server:
        with anyio.fail_after(READ_TIMEOUT):
            chunks, message = await collect(anthropic(server.url, read_timeout=READ_TIMEOUT), ASK)
    assert (message.text, message.stop_reason) == ("Here is a very long", "max_tokens")
    assert _usage_of(chunks) == [(25, 5)]


async def test_openai_empty_chunks_after_the_finish_do_not_keep_the_answer_open(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the same for chunks with nothing in them after the finish_reason, no [DONE]
    monkeypatch.setattr("dsh.llm.openai.FINISH_GRACE", 0.3)
    off = ModelRequest(
        messages=(UserMessage(content="hi"),), options={"stream_options": {"include_usage": False}}
    )
    pieces = [_data(openai_chunk({"content": "Hi"})), _data(openai_chunk({}, "stop"))]
    empty = _data({"choices": []})
    async with WireServer([sse([*pieces, *[empty] * KEPT_UP], pause=0.1)]) as server:
        with anyio.fail_after(READ_TIMEOUT):
            _, message = await collect(openai(server.url, read_timeout=READ_TIMEOUT), off)
    assert (message.text, message.stop_reason) == ("Hi", "stop")
