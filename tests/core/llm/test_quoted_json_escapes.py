"""A body or chunk quoted in MALFORMED_RESPONSE hides the key also where it is written
with JSON escapes (``sk\\u002dlive...``, ``\\/``): a server may echo it so, and the
message would show it one decode away (behaviour 13: errors never carry the key).

Before: the quote was redacted as written, so an escaped key passed whole."""

from __future__ import annotations

import pytest
from llm_wire import Reply, WireServer, sse
from test_llm_http import KEY, fails, openai

from dsh.llm._errors import malformed

ESCAPED = KEY.replace("-", "\\u002d")


@pytest.mark.parametrize(
    "body",
    [
        '{"detail": "bad key ' + ESCAPED + '"}',  # JSON: re-written before the quote
        '{"detail": "bad key ' + ESCAPED + '", "cut": "',  # not whole JSON
        '{"detail": "bad key ' + KEY.replace("-", "\\u002D") + '"}',
    ],
)
async def test_a_200_body_quoting_an_escaped_key_hides_it(body: str) -> None:
    reply = Reply(200, body.encode(), {"content-type": "application/json"})
    async with WireServer([reply]) as server:
        err = await fails(openai(server.url))
    assert err.code == "MALFORMED_RESPONSE"
    assert "bad key" in err.message
    assert "0123456789" not in err.message, err.message


async def test_a_bad_chunk_quoting_an_escaped_key_hides_it() -> None:
    chunk = '{"choices": "bad key ' + ESCAPED + '"}'
    async with WireServer([sse(f"data: {chunk}\n\n".encode())]) as server:
        err = await fails(openai(server.url))
    assert err.code == "MALFORMED_RESPONSE"
    assert "bad key" in err.message
    assert "0123456789" not in err.message, err.message


def test_a_slash_written_escaped_is_seen() -> None:
    key = "k01234/56789/abcde"
    data = '{"x": "' + key.replace("/", "\\/") + '"}'
    error = malformed("m", "chunk", data, ValueError("no"), (key,))
    assert "56789" not in error.message, error.message


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        # events with no error object: the body is quoted as it came (s45 re-review)
        (b'data: {"x": "bad key ' + ESCAPED.encode() + b'"}\n\n', "text/event-stream"),
        # a body that is not JSON, cut short, say
        (b'{"detail": "bad key ' + ESCAPED.encode() + b'", "cut', "application/json"),
        (b"bad key " + ESCAPED.encode(), "text/plain"),
        # an error event of words
        (b"event: error\ndata: bad key " + ESCAPED.encode() + b"\n\n", "text/event-stream"),
    ],
)
async def test_an_error_status_s_raw_body_quoting_an_escaped_key_hides_it(
    body: bytes, kind: str
) -> None:
    async with WireServer([Reply(401, body, {"content-type": kind})]) as server:
        err = await fails(openai(server.url, max_retries=0))
    assert err.code == "AUTH"
    assert "bad key" in err.message
    assert "0123456789" not in err.message, err.message
