"""A 2xx answer that is not an event stream (behaviour 13: the provider's code and
message). Its body is read as an error response's is (its first 64 KiB): a JSON error
(``{"error": ...}``, Anthropic's ``{"type": "error", "error": ...}``, vLLM's
``{"object": "error", ...}``) is the server's error, coded as the same object inside a
stream is (AUTH, RATE_LIMIT, CONTEXT_WINDOW_EXCEEDED...), the keys hidden; anything else
is MALFORMED_RESPONSE quoting the start of the body, the keys hidden. A media type's
case does not matter (RFC 9110 8.3.1): ``Text/Event-Stream`` is an event stream.

Before: every such answer was MALFORMED_RESPONSE "expected a text/event-stream answer"
(the server's error lost), ``Text/Event-Stream`` too."""

from __future__ import annotations

import json

import pytest
from llm_wire import Reply, WireServer, collect, recorded
from test_llm_http import ASK, KEY, TEXT, anthropic, fails, openai


def answer(payload: object, kind: str = "application/json") -> Reply:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return Reply(200, raw, {"content-type": kind})


async def test_a_json_error_body_with_status_200_is_the_servers_error() -> None:
    said = {
        "error": {
            "message": f"Incorrect API key provided: {KEY}",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }
    }
    async with WireServer([answer(said)]) as server:
        err = await fails(openai(server.url, max_retries=2))
        assert len(server.requests) == 1
    assert err.code == "AUTH"
    assert "Incorrect API key provided" in err.message
    assert "HTTP 200" in err.message and "application/json" in err.message


@pytest.mark.parametrize(
    ("said", "code"),
    [
        ({"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}}, "RATE_LIMIT"),
        ({"type": "error", "code": "rate_limit_exceeded", "message": "slow down"}, "RATE_LIMIT"),
        ({"error": {"code": 401, "message": "no such key"}}, "AUTH"),
        ({"error": "model 'x' not found"}, "SERVER"),
        (
            [{"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}],
            "RATE_LIMIT",
        ),
    ],
)
async def test_each_json_error_shape_keeps_its_code(said: object, code: str) -> None:
    async with WireServer([answer(said)]) as server:
        err = await fails(openai(server.url))
    assert err.code == code


async def test_a_context_error_keeps_its_sizes() -> None:
    said = {
        "object": "error",
        "message": "This model's maximum context length is 4096 tokens. However, your "
        "request has 5000 input tokens.",
        "code": 400,
    }
    async with WireServer([answer(said)]) as server:
        err = await fails(openai(server.url))
    assert err.code == "CONTEXT_WINDOW_EXCEEDED"
    assert (err.context_window, err.request_tokens) == (4096, 5000)


async def test_anthropic_json_error_with_status_200() -> None:
    said = {"type": "error", "error": {"type": "authentication_error", "message": f"bad {KEY}"}}
    async with WireServer([answer(said)]) as server:
        err = await fails(anthropic(server.url))
    assert err.code == "AUTH"
    assert "bad" in err.message


async def test_a_body_that_is_no_json_error_is_malformed_quoting_its_start() -> None:
    page = b"<html>\n<body>gateway page for key " + KEY.encode() + b"</body>" + b"x" * 5000
    async with WireServer([answer(page, "text/html; charset=utf-8")]) as server:
        err = await fails(openai(server.url))
    assert err.code == "MALFORMED_RESPONSE"
    assert "expected a text/event-stream answer" in err.message
    assert "text/html" in err.message
    assert "<html>\\n<body>gateway page for key" in err.message
    assert len(err.message) < 500  # the start of the body only


@pytest.mark.parametrize("said", [{"choices": [{"text": "hi"}]}, {"error": None}, [], b""])
async def test_json_that_is_no_error_is_malformed(said: object) -> None:
    async with WireServer([answer(said)]) as server:
        err = await fails(openai(server.url))
    assert err.code == "MALFORMED_RESPONSE"
    assert "expected a text/event-stream answer" in err.message


async def test_a_body_that_quotes_the_key_near_the_cut_hides_it() -> None:
    page = b"y" * 190 + KEY.encode() + b" and more"
    async with WireServer([answer(page, "text/plain")]) as server:
        err = await fails(openai(server.url))
    assert KEY[:12] not in err.message


@pytest.mark.parametrize("kind", ["Text/Event-Stream", "TEXT/EVENT-STREAM; charset=utf-8"])
async def test_the_media_type_is_read_in_any_case(kind: str) -> None:
    async with WireServer([Reply(200, TEXT, {"content-type": kind})]) as server:
        _, message = await collect(openai(server.url), ASK)
    assert message.text
    body = recorded("anthropic_max_tokens.sse")
    async with WireServer([Reply(200, body, {"content-type": kind})]) as server:
        _, message = await collect(anthropic(server.url), ASK)
    assert message.stop_reason == "max_tokens"


async def test_a_stream_of_another_type_is_quoted_without_waiting_for_its_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # application/x-ndjson, a line now and then: the quote is what came in the
    # first moment after the body began (here 0.01 s), not 64 KiB or the end
    monkeypatch.setattr("dsh.llm._not_streamed.QUOTE_WAIT", 0.01)
    first = b'{"choices": [{"delta": {"content": "first"}}]}\n'
    pieces = [first, b'{"later": "LAST"}\n']
    reply = Reply(200, pieces, {"content-type": "application/x-ndjson"}, pause=1.0, then="stall")
    async with WireServer([reply]) as server:
        err = await fails(openai(server.url))
    assert err.code == "MALFORMED_RESPONSE"
    assert "first" in err.message and "LAST" not in err.message
