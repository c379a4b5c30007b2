"""Provider failures over real HTTP, continued: every retryable status, the code of each
status and error type (in a response or inside a stream), the error bodies servers send,
what the message shows (and never the key), and how a failed connection is told apart."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from llm_wire import Reply, WireServer, closed_port, collect, error, every, sse, unserved
from test_llm_http import ASK, KEY, TEXT, anthropic, fails, openai

from dsh.errors import ModelError
from dsh.llm._errors import error_from_transport
from dsh.llm._retry_after import retry_after

# -- statuses --------------------------------------------------------------------------


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 504, 529])
async def test_every_retryable_status_is_tried_again(status: int) -> None:
    async with WireServer([error(status, {"error": {"message": "busy"}}), sse(TEXT)]) as server:
        _, message = await collect(openai(server.url), ASK)
        assert len(server.requests) == 2
    assert message.text.startswith("Voilà")


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (400, "INVALID_REQUEST"),
        (401, "AUTH"),
        (403, "AUTH"),
        (404, "INVALID_REQUEST"),
        (408, "TIMEOUT"),
        (422, "INVALID_REQUEST"),
        (429, "RATE_LIMIT"),
        (500, "SERVER"),
        (529, "SERVER"),
    ],
)
async def test_each_status_has_its_code_and_the_message_names_model_and_status(
    status: int, code: str
) -> None:
    async with WireServer([error(status, {"error": {"message": "nope"}})]) as server:
        url = server.url
        err = await fails(openai(url, max_retries=0))
    assert err.code == code
    refused = " (the key from WIRE_KEY)" if code == "AUTH" else ""  # where the key came from
    if status == 404:  # the address (test_not_found_hint.py)
        refused = f" (requests go to {url}/chat/completions, base_url + "
        refused += "/chat/completions: check base_url)"
    assert unserved(err.message) == f"model 'wire': HTTP {status}: nope{refused}"


# -- context window errors ---------------------------------------------------------------


@pytest.mark.parametrize(
    "payload",
    [
        {"error": {"code": "context_length_exceeded", "message": "Request rejected"}},
        {"error": {"code": 400, "type": "exceed_context_size_error", "message": "rejected"}},
        {"type": "error", "error": {"type": "model_context_window_exceeded", "message": "no"}},
    ],
    ids=["openai", "llama.cpp", "anthropic"],
)
async def test_a_context_error_is_recognised_by_its_type_alone(payload: Any) -> None:
    async with WireServer([error(400, payload)]) as server:
        err = await fails(openai(server.url))
    assert err.code == "CONTEXT_WINDOW_EXCEEDED"


@pytest.mark.parametrize(
    "words",
    [
        "The decoder prompt (length 5000) is longer than the maximum model length of 4096.",
        "too many input tokens",
        "Input exceeds the context (8192 tokens)",
        "Context size has been exceeded.",
    ],
)
async def test_a_context_error_is_recognised_by_the_servers_words(words: str) -> None:
    async with WireServer([error(400, {"error": {"message": words}})]) as server:
        err = await fails(openai(server.url))
    assert err.code == "CONTEXT_WINDOW_EXCEEDED"
    assert words in err.message


async def test_a_rate_limit_that_speaks_of_tokens_is_still_a_rate_limit() -> None:
    throttled = error(429, {"error": {"message": "Too many tokens, please wait and retry."}})
    async with WireServer([throttled]) as server:
        err = await fails(openai(server.url, max_retries=0))
    assert err.code == "RATE_LIMIT"
    event = {"type": "error", "error": {"type": "rate_limit_error", "message": "Too many tokens"}}
    body = b"event: error\ndata: " + json.dumps(event).encode() + b"\n\n"
    async with WireServer([sse(body)]) as server:
        err = await fails(anthropic(server.url))
    assert err.code == "RATE_LIMIT"


async def test_a_context_error_on_a_retryable_status_is_not_tried_again() -> None:
    payload = {"error": {"message": "the request exceeds the available context size"}}
    async with WireServer([error(500, payload), sse(TEXT)]) as server:
        err = await fails(openai(server.url))
        assert len(server.requests) == 1
    assert err.code == "CONTEXT_WINDOW_EXCEEDED"


# -- error bodies ------------------------------------------------------------------------

HTML_502 = (
    b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n"
    b"<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n"
)


VALIDATION = [{"loc": ["body"], "msg": "field required"}]
ERROR_BODIES = {  # (status, body, what the message quotes)
    "ollama": (404, {"error": "model 'qwen' not found"}, "model 'qwen' not found"),
    "fastapi": (404, {"detail": "Not Found"}, "Not Found"),
    "detail": (502, {"error": {"detail": "upstream gone"}}, "upstream gone"),
    "validation": (422, {"detail": VALIDATION}, json.dumps(VALIDATION)),
    "no-message": (400, {"error": {"code": 17, "param": "x"}}, '{"code": 17, "param": "x"}'),
    "empty": (503, b"", "Service Unavailable"),
    "html": (502, HTML_502, " ".join(HTML_502.decode().split())),
}


@pytest.mark.parametrize(
    ("status", "body", "shown"), list(ERROR_BODIES.values()), ids=list(ERROR_BODIES)
)
async def test_every_shape_of_error_body_gives_the_servers_words_on_one_line(
    status: int, body: Any, shown: str
) -> None:
    async with WireServer([error(status, body)]) as server:
        url = server.url
        err = await fails(openai(url, max_retries=0))
    if status == 404 and "model" not in shown:  # the address (test_not_found_hint.py)
        shown += f" (requests go to {url}/chat/completions, base_url + "
        shown += "/chat/completions: check base_url)"
    assert unserved(err.message) == f"model 'wire': HTTP {status}: {shown}"


async def test_the_error_type_comes_before_the_servers_words() -> None:
    payload = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "max_tokens: Field required"},
    }
    async with WireServer([error(400, payload)]) as server:
        err = await fails(anthropic(server.url))
    assert unserved(err.message) == (
        "model 'wire': HTTP 400: invalid_request_error: max_tokens: Field required"
    )


@pytest.mark.parametrize(("length", "kept"), [(300, "a" * 300), (301, "a" * 299 + "…")])
async def test_a_long_error_text_is_cut_to_300_characters(length: int, kept: str) -> None:
    async with WireServer([error(400, b"a" * length)]) as server:
        err = await fails(openai(server.url))
    assert unserved(err.message) == f"model 'wire': HTTP 400: {kept}"


async def test_an_error_body_that_arrives_in_pieces_is_read_whole() -> None:
    payload = {"error": {"message": "Unknown parameter: 'foo'.", "type": "invalid_request_error"}}
    reply = Reply(400, every(json.dumps(payload).encode(), 4), {"content-type": "application/json"})
    async with WireServer([reply]) as server:
        err = await fails(openai(server.url))
    assert (
        unserved(err.message)
        == "model 'wire': HTTP 400: invalid_request_error: Unknown parameter: 'foo'."
    )


async def test_an_error_body_cut_off_still_gives_the_statuss_code() -> None:
    cut = Reply(503, [b'{"error": {"mess'], {"content-type": "application/json"}, then="drop")
    async with WireServer([cut, cut]) as server:
        err = await fails(openai(server.url, max_retries=1))
        assert len(server.requests) == 2
    assert err.code == "SERVER"
    assert "HTTP 503" in err.message


async def test_a_non_stream_answer_names_the_content_type_it_got() -> None:
    async with WireServer([error(200, {"choices": []})]) as server:
        err = await fails(openai(server.url))
    assert "'application/json'" in err.message


async def test_a_redirect_is_not_followed_so_the_key_goes_nowhere_else() -> None:
    moved = Reply(307, b"", {"location": "/elsewhere/chat/completions"})
    async with WireServer([moved, sse(TEXT)]) as server:
        err = await fails(openai(server.url))
        assert [r.path for r in server.requests] == ["/v1/chat/completions"]
    assert err.code == "INVALID_REQUEST"
    assert unserved(err.message) == (
        "model 'wire': HTTP 307: the server redirects to /elsewhere/chat/completions; "
        "set base_url to the API's own address"
    )


async def test_a_chunk_with_a_null_error_is_read_as_a_chunk() -> None:
    chunk = {"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}
    body = b"data: " + json.dumps({**chunk, "error": None}).encode() + b"\n\ndata: [DONE]\n\n"
    async with WireServer([sse(body)]) as server:
        _, message = await collect(openai(server.url), ASK)
    assert (message.text, message.stop_reason) == ("hi", "stop")


# -- errors inside a stream ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "code"),
    [
        ("invalid_request_error", "INVALID_REQUEST"),
        ("authentication_error", "AUTH"),
        ("permission_error", "AUTH"),
        ("not_found_error", "INVALID_REQUEST"),
        ("request_too_large", "INVALID_REQUEST"),
        ("rate_limit_error", "RATE_LIMIT"),
        ("api_error", "SERVER"),
        ("overloaded_error", "SERVER"),
        ("timeout_error", "TIMEOUT"),
    ],
)
async def test_each_anthropic_error_event_type_has_its_code(kind: str, code: str) -> None:
    event = {"type": "error", "error": {"type": kind, "message": "it failed"}}
    body = b"event: error\ndata: " + json.dumps(event).encode() + b"\n\n"
    async with WireServer([sse(body)]) as server:
        err = await fails(anthropic(server.url))
    assert err.code == code
    assert unserved(err.message) == f"model 'wire': error in the stream: {kind}: it failed"


OPENAI_STREAM_ERRORS = {
    "openai-rate-limit": (
        {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"},
        "RATE_LIMIT",
    ),
    "openai-key": ({"message": "Incorrect API key", "code": "invalid_api_key"}, "AUTH"),
    "quota": ({"message": "You exceeded your quota", "code": "insufficient_quota"}, "RATE_LIMIT"),
    "no-type": ({"message": "stream failed"}, "SERVER"),
    "vllm": (
        {"object": "error", "message": "bad n", "type": "BadRequestError", "code": 400},
        "INVALID_REQUEST",
    ),
}


@pytest.mark.parametrize(
    ("error_object", "code"), list(OPENAI_STREAM_ERRORS.values()), ids=list(OPENAI_STREAM_ERRORS)
)
async def test_an_error_object_in_an_openai_stream_has_its_code(
    error_object: dict[str, Any], code: str
) -> None:
    body = b"data: " + json.dumps({"error": error_object}).encode() + b"\n\n"
    async with WireServer([sse(body)]) as server:
        err = await fails(openai(server.url))
    assert err.code == code


async def test_an_openrouter_error_next_to_its_choices_ends_the_stream() -> None:
    chunk = {
        "id": "gen-1",
        "error": {"code": 502, "message": "Provider returned error"},
        "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
    }
    body = b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n"
    async with WireServer([sse(body)]) as server:
        err = await fails(openai(server.url))
    assert (err.code, "Provider returned error" in err.message) == ("SERVER", True)


@pytest.mark.parametrize("adapter", [openai, anthropic])
async def test_an_error_inside_the_stream_never_shows_the_key(adapter: Any) -> None:
    inner = {"type": "authentication_error", "message": f"invalid x-api-key {KEY}"}
    event = {"type": "error", "error": inner} if adapter is anthropic else {"error": inner}
    body = b"data: " + json.dumps(event).encode() + b"\n\n"
    async with WireServer([sse(body)]) as server:
        err = await fails(adapter(server.url))  # fails() checks the key is not shown
    assert err.code == "AUTH"
    assert "invalid x-api-key ***" in err.message


@pytest.mark.parametrize("adapter", [openai, anthropic])
@pytest.mark.parametrize("before", ["401 invalid api key ", "x" * 190])  # 190: across the cut
async def test_an_unreadable_chunk_quoting_the_key_never_shows_it(
    adapter: Any, before: str
) -> None:
    body = f"data: {before}{KEY}\n\n".encode()
    async with WireServer([sse(body)]) as server:
        err = await fails(adapter(server.url))  # fails() checks the key is not shown
    assert err.code == "MALFORMED_RESPONSE"
    assert KEY[:8] not in err.message  # nor a piece of it the quote's cut left


# -- the connection itself -----------------------------------------------------------------


async def test_a_connection_closed_before_any_answer_is_tried_again() -> None:
    async with WireServer([Reply(status=0, then="drop"), sse(TEXT)]) as server:
        _, message = await collect(openai(server.url), ASK)
        assert len(server.requests) == 2
    assert message.stop_reason == "stop"


async def test_nothing_listening_says_why_the_server_cannot_be_reached() -> None:
    url = closed_port()
    err = await fails(openai(url, max_retries=0))
    reason = err.message.partition(f"cannot reach the server at {url[:-3]}: ")[2]
    assert reason.strip()


@pytest.mark.parametrize(
    "exc", [httpx.ConnectTimeout("connect"), httpx.PoolTimeout("pool"), httpx.ReadTimeout("read")]
)
def test_every_kind_of_timeout_is_timeout(exc: httpx.TimeoutException) -> None:
    error = error_from_transport("m", exc, streaming=False)
    assert isinstance(error, ModelError)
    assert error.code == "TIMEOUT"
    assert type(exc).__name__ in error.message


def test_retry_after_is_never_negative_and_an_unreadable_ms_falls_back() -> None:
    assert retry_after({"retry-after-ms": "-250"}) == 0
    assert retry_after({"retry-after": "-3"}) == 0
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0
    assert retry_after({"retry-after-ms": "soon", "retry-after": "2"}) == 2
