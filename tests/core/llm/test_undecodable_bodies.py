"""A body that is not an event stream and cannot be decoded (a gzip Content-Encoding, a
body that is not gzip) says so and names the server, as a streamed one does
(test_stream_breaks_review.py): a 2xx JSON answer is MALFORMED_RESPONSE, an error
status keeps its code and says so in place of the body's words. Before, the decoding
error was taken as the end of the body: ``expected a text/event-stream answer, got
'application/json' with an empty body``, or the status alone (``HTTP 502: Bad
Gateway``)."""

from __future__ import annotations

import gzip
import json

import pytest
from llm_wire import Reply, WireServer, unserved
from test_llm_http import fails, openai

BROKEN = {"content-type": "application/json", "content-encoding": "gzip"}
UNDECODABLE = (
    "the body from the server at {at} could not be decoded: Error -3 while decompressing "
    "data: incorrect header check (DecodingError)"
)


async def test_a_json_answer_that_cannot_be_decoded_is_malformed_saying_so() -> None:
    async with WireServer([Reply(200, b'{"not": "gzip"}', BROKEN)]) as server:
        err = await fails(openai(server.url))
        at = server.url.removesuffix("/v1")
    assert (err.code, err.message) == (
        "MALFORMED_RESPONSE",
        "model 'wire': " + UNDECODABLE.format(at=at),
    )


@pytest.mark.parametrize(
    ("status", "code"), [(502, "SERVER"), (401, "AUTH"), (400, "INVALID_REQUEST")]
)
async def test_an_error_body_that_cannot_be_decoded_keeps_its_status_saying_so(
    status: int, code: str
) -> None:
    async with WireServer([Reply(status, b'{"not": "gzip"}', BROKEN)] * 2) as server:
        err = await fails(openai(server.url, max_retries=1))
        at = server.url.removesuffix("/v1")
        tries = len(server.requests)
    assert err.code == code
    said = UNDECODABLE.replace(" at {at}", "")  # once, after the status
    assert err.message.startswith(f"model 'wire': HTTP {status} from the server at {at}: {said}")
    assert tries == (2 if status == 502 else 1)  # retried as the status is


async def test_a_gzip_error_body_is_read() -> None:
    quota = {"error": {"message": "You exceeded your quota", "type": "insufficient_quota"}}
    body = gzip.compress(json.dumps(quota).encode())
    async with WireServer([Reply(429, body, BROKEN)]) as server:
        err = await fails(openai(server.url))
    assert (err.code, unserved(err.message)) == (
        "RATE_LIMIT",
        "model 'wire': HTTP 429: insufficient_quota: You exceeded your quota",
    )
