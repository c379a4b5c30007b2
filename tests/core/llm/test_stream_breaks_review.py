"""How a stream's end or break is told, found by a review of the HTTP adapters (s45).

- ``data: [DONE]`` with white space after it (``data: [DONE] ``) is the end marker; it
  was MALFORMED_RESPONSE (``unreadable chunk '[DONE] '``).
- A body that cannot be decoded (a gzip Content-Encoding, a body that is not gzip) is
  MALFORMED_RESPONSE saying so; it was STREAM_CLOSED, "cut off".
- A connection reset mid-stream (an ``httpx.ReadError`` without words, as on asyncio)
  says the server reset or closed it, and names the server, as a failure before any
  answer does; it was "cut off before it finished: ReadError"."""

from __future__ import annotations

import gzip

import httpx
import pytest
from llm_wire import Reply, WireServer, by_event, collect, sse
from test_llm_http import ASK, TEXT, fails, openai

from dsh.llm._errors import error_from_transport

CHUNK = b'data: {"choices": [{"index": 0, "delta": {"content": "hi"}}]}\n\n'
STOP = b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n'


@pytest.mark.parametrize("marker", [b"data: [DONE] ", b"data: [DONE]\t", b"data:  [DONE]"])
async def test_the_end_marker_with_white_space_around_it_ends_the_stream(marker: bytes) -> None:
    tail = b'data: {"choices": [{"index": 0, "delta": {"content": "AFTER"}}]}\n\n'
    async with WireServer([sse(CHUNK + marker + b"\n\n" + tail)]) as server:
        _, message = await collect(openai(server.url), ASK)
    assert message.text == "hi"


async def test_a_body_that_cannot_be_decoded_is_malformed_saying_so() -> None:
    body = Reply(
        200, b"not gzip", {"content-type": "text/event-stream", "content-encoding": "gzip"}
    )
    async with WireServer([body]) as server:
        err = await fails(openai(server.url))
        at = server.url.removesuffix("/v1")
    assert (err.code, err.message) == (
        "MALFORMED_RESPONSE",
        f"model 'wire': the body from the server at {at} could not be decoded: Error -3 "
        "while decompressing data: incorrect header check (DecodingError)",
    )


async def test_a_gzip_body_is_read() -> None:
    headers = {"content-type": "text/event-stream", "content-encoding": "gzip"}
    async with WireServer([Reply(200, gzip.compress(TEXT), headers)]) as server:
        _, message = await collect(openai(server.url), ASK)
    assert message.text.startswith("Voilà")


@pytest.mark.parametrize("streaming", [True, False])
def test_a_decoding_error_is_malformed_streaming_or_not(streaming: bool) -> None:
    exc = httpx.DecodingError("Error -3 while decompressing data")
    err = error_from_transport("m", exc, streaming=streaming, server="http://h:8")
    assert (err.code, err.message) == (
        "MALFORMED_RESPONSE",
        "model 'm': the body from the server at http://h:8 could not be decoded: "
        "Error -3 while decompressing data (DecodingError)",
    )


async def test_a_connection_reset_mid_stream_names_the_server_and_the_reset() -> None:
    async with WireServer([sse(by_event(TEXT)[:2], then="reset"), sse(TEXT)]) as server:
        err = await fails(openai(server.url))
        assert len(server.requests) == 1  # a half-streamed answer is never replayed
        at = server.url.removesuffix("/v1")
    assert err.code == "STREAM_CLOSED"
    cut = f"model 'wire': the stream from the server at {at} was cut off before it finished: "
    # asyncio's reset has no words; trio's says "[Errno 104] Connection reset by peer"
    assert err.message in (
        cut + "the server reset or closed the connection (ReadError)",
        cut + "socket connection broken: [Errno 104] Connection reset by peer (ReadError)",
    )


@pytest.mark.parametrize(
    ("exc", "said"),
    [
        (httpx.ReadError(""), "the server reset or closed the connection (ReadError)"),
        (httpx.WriteError(" "), "the server reset or closed the connection (WriteError)"),
        (
            httpx.ReadError("[Errno 104] Connection reset by peer"),
            "[Errno 104] Connection reset by peer (ReadError)",
        ),
        (
            httpx.RemoteProtocolError("peer closed connection without sending complete body"),
            "peer closed connection without sending complete body",
        ),
    ],
)
def test_a_stream_cut_off_names_the_server(exc: httpx.HTTPError, said: str) -> None:
    err = error_from_transport("m", exc, streaming=True, server="http://h:8")
    assert (err.code, err.message) == (
        "STREAM_CLOSED",
        "model 'm': the stream from the server at http://h:8 was cut off before it finished: "
        + said,
    )
