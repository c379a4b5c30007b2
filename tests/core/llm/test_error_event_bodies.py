"""An error response (non-2xx) whose body is an event stream (``text/event-stream``,
or a body starting as one: a field, ``data:``, ``event:``..., or a comment) is read
through the SSE parser: the first data that is a JSON error object is the error, as the
same object sent as JSON is (its kind, its words, its wait). Before, the body was
quoted raw (``HTTP 500: event: error data: {...}``) and its kind lost: a 429
``insufficient_quota`` so sent was retried, though the same body as JSON is not (found
by a review of the HTTP adapters, s45)."""

from __future__ import annotations

import json

import anyio
import pytest
from llm_wire import STALL_LIMIT, Reply, WireServer, error, unserved
from test_llm_http import KEY, anthropic, fails, openai

QUOTA = {
    "error": {
        "message": "You exceeded your current quota",
        "type": "insufficient_quota",
        "code": "insufficient_quota",
    }
}
STREAM = {"content-type": "text/event-stream"}
PLAIN = {"content-type": "text/plain"}


def events(*data: bytes, name: bytes = b"") -> bytes:
    named = b"event: " + name + b"\n" if name else b""
    return b"".join(named + b"data: " + piece + b"\n\n" for piece in data)


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        pytest.param(events(json.dumps(QUOTA).encode()), STREAM, id="event-stream"),
        pytest.param(events(json.dumps(QUOTA).encode(), name=b"error"), STREAM, id="named"),
        pytest.param(events(json.dumps(QUOTA).encode()), {"content-type": "text/plain"}, id="data"),
        pytest.param(events(b": hi", json.dumps(QUOTA).encode()), STREAM, id="after-other-data"),
        # under a Content-Type that is not an event stream, known by any start of one: a
        # byte order mark, a comment, or another field first (found by a re-review, s45)
        *(
            pytest.param(start + events(json.dumps(QUOTA).encode()), PLAIN, id=name)
            for name, start in [
                ("bom", "\ufeff".encode()),
                ("comment", b": keep-alive\n\n"),
                ("id", b"id: 1\n"),
                ("retry", b"retry: 500\n"),
                ("bom-event", "\ufeff".encode() + b"event: error\n"),
            ]
        ),
    ],
)
async def test_an_exhausted_quota_as_events_is_not_retried_as_json_is(
    body: bytes, headers: dict[str, str]
) -> None:
    async with WireServer([error(429, QUOTA)]) as server:
        as_json = await fails(openai(server.url))
    async with WireServer([Reply(429, body, headers)] * 3) as server:
        err = await fails(openai(server.url))
        assert len(server.requests) == 1
    assert (err.code, unserved(err.message)) == (as_json.code, unserved(as_json.message))
    assert unserved(err.message) == (
        "model 'wire': HTTP 429: insufficient_quota: You exceeded your current quota"
    )


async def test_an_anthropic_overload_as_an_error_event_keeps_its_kind_and_its_wait() -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    body = b"event: error\r\ndata: " + json.dumps({**overloaded, "retry_after": 7}).encode()
    async with WireServer([Reply(529, body + b"\r\n\r\n", STREAM)]) as server:
        err = await fails(anthropic(server.url, max_retries=0))
    assert (err.code, err.retry_after) == ("SERVER", 7.0)
    assert unserved(err.message) == "model 'wire': HTTP 529: overloaded_error: Overloaded"


async def test_an_error_event_of_words_is_its_words_and_the_key_is_hidden() -> None:
    body = b"event: error\ndata: upstream failed for " + KEY.encode() + b"\n\n"
    async with WireServer([Reply(500, body, STREAM)]) as server:
        err = await fails(openai(server.url, max_retries=0))
    assert (err.code, unserved(err.message)) == (
        "SERVER",
        "model 'wire': HTTP 500: upstream failed for ***",
    )


async def test_events_without_an_error_object_are_quoted_as_before() -> None:
    body = events(b'{"choices": []}')
    async with WireServer([Reply(500, body, STREAM)]) as server:
        err = await fails(openai(server.url, max_retries=0))
    assert unserved(err.message) == "model 'wire': HTTP 500: data: {\"choices\": []}"


@pytest.mark.parametrize(
    ("start", "pieces", "headers"),
    [
        pytest.param(b": hi\n\n", 1, STREAM, id="whole"),
        pytest.param(b": hi\n\n", 7, STREAM, id="in-pieces"),
        # a body starting as events is one, whatever its type says (streamed_error): it
        # was read to its end (s46)
        pytest.param(b": hi\n\n", 1, PLAIN, id="plain-whole"),
        pytest.param("\ufeff \n".encode(), 2, PLAIN, id="plain-start-in-pieces"),
    ],
)
async def test_an_error_stream_left_open_after_its_error_is_not_waited_for(
    start: bytes, pieces: int, headers: dict[str, str]
) -> None:
    """The error event is the error: the body is read up to it, not to its end (a server
    that keeps the stream open held the request until a timeout; s45 re-review)."""
    body = start + events(json.dumps(QUOTA).encode(), name=b"error")
    parts = [body[i : i + pieces] for i in range(0, len(body), pieces)] if pieces > 1 else [body]
    async with WireServer([Reply(429, parts, headers, then="stall")]) as server:
        err = await fails(openai(server.url, max_retries=0, timeout=60))
        # the client closed the stalled reply (the server did not give up on it: it
        # does after STALL_LIMIT, without setting the flag)
        with anyio.fail_after(STALL_LIMIT):
            await server.disconnected.wait()
    assert unserved(err.message) == (
        "model 'wire': HTTP 429: insufficient_quota: You exceeded your current quota"
    )
