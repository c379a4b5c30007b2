"""Error objects that OpenAI-compatible servers write on a data line, in shapes the
chat-completions adapter did not read, and error codes written as text.

- An error object without the ``{"error": ...}`` wrapper and without an
  ``event: error`` line: the Responses API's error event, ``{"type": "error", "code",
  "message", "param", "sequence_number"}`` (OpenAI's ResponseErrorEvent; Llama Stack
  sends it on its streams, ogx-ai/ogx PR #5224), and vLLM's older top-level
  ``{"object": "error", "message", "type", "code"}`` (aaif-goose/goose PR #8031). The
  adapter skipped it (no ``choices``), read the ``[DONE]`` after it and returned what
  had streamed as a whole answer. It now ends the stream with the server's error, as an
  ``event: error`` with the same data does.
- A status written as text, ``"code": "429"`` (LiteLLM's proxy writes its errors'
  codes as strings, and parses them back with ``int``; Llama Stack's ``"400"``): taken
  for the error's kind, so a rate limit was ``SERVER``, and the text shadowed the
  ``type`` beside it (``insufficient_quota``, which is never retried). Now read as the
  number it is.
"""

from __future__ import annotations

from typing import Any

import pytest
from llm_wire import WireServer, error, sse, unserved
from test_compat_study import DONE, chunk, data, failure
from test_llm_http import KEY, fails, openai

START = chunk({"role": "assistant", "content": "The answ"})


def in_stream(obj: dict[str, Any]) -> list[bytes]:
    return [START, data(obj), DONE]


UNWRAPPED = {
    # OpenAI Responses' error event, as a server that mixes the two APIs sends it
    "responses-error-event": (
        {
            "type": "error",
            "code": "server_error",
            "message": "upstream reset",
            "param": None,
            "sequence_number": 3,
        },
        "SERVER",
        "server_error: upstream reset",
    ),
    # Llama Stack: a status as text in the Responses shape
    "responses-status-text": (
        {"type": "error", "code": "400", "message": "model not found", "sequence_number": 5},
        "INVALID_REQUEST",
        "model not found",
    ),
    "responses-rate-limit": (
        {"type": "error", "code": "rate_limit_exceeded", "message": "slow down", "param": None},
        "RATE_LIMIT",
        "rate_limit_exceeded: slow down",
    ),
    # vLLM's ErrorResponse before it was wrapped in "error"
    "vllm-top-level": (
        {"object": "error", "message": "bad n", "type": "BadRequestError", "code": 400},
        "INVALID_REQUEST",
        "BadRequestError: bad n",
    ),
    "vllm-context": (
        {
            "object": "error",
            "message": "This model's maximum context length is 2048 tokens.",
            "type": "BadRequestError",
            "code": 400,
        },
        "CONTEXT_WINDOW_EXCEEDED",
        "BadRequestError: This model's maximum context length is 2048 tokens.",
    ),
}


@pytest.mark.parametrize("case", list(UNWRAPPED))
async def test_an_unwrapped_error_object_on_a_data_line_ends_the_stream(case: str) -> None:
    obj, code, words = UNWRAPPED[case]
    err = await failure(in_stream(obj))
    assert (err.code, unserved(err.message)) == (
        code,
        f"model 'wire': error in the stream: {words}",
    )


@pytest.mark.parametrize("case", list(UNWRAPPED))
async def test_it_is_the_error_an_error_event_with_the_same_data_is(case: str) -> None:
    obj = UNWRAPPED[case][0]
    named = b"event: error\n" + data(obj)
    plain, event = await failure(in_stream(obj)), await failure([START, named, DONE])
    assert (plain.code, unserved(plain.message)) == (event.code, unserved(event.message))


async def test_an_unwrapped_error_never_shows_the_key() -> None:
    obj = {"type": "error", "code": "invalid_api_key", "message": f"bad key {KEY}"}
    async with WireServer([sse(in_stream(obj))]) as server:
        err = await fails(openai(server.url))  # fails() checks the key is not shown
    assert (err.code, unserved(err.message)) == (
        "AUTH",
        "model 'wire': error in the stream: invalid_api_key: bad key ***",
    )


@pytest.mark.parametrize("status", [400, 401, 403, 404, 408, 413, 429, 500, 502, 503, 529])
async def test_a_status_written_as_text_is_read_as_the_number_is(status: int) -> None:
    def body(code: object) -> list[bytes]:
        return in_stream({"error": {"message": "it failed", "type": "proxy", "code": code}})

    number, text = await failure(body(status)), await failure(body(str(status)))
    assert (text.code, unserved(text.message)) == (number.code, unserved(number.message))
    assert text.code != "SERVER" or status >= 500


async def test_a_provider_s_own_number_as_text_stays_its_kind() -> None:
    # not an HTTP status: quoted as the error's kind, as any other code text is
    own = {"error": {"message": "content flagged", "code": "1301"}}
    err = await failure(in_stream(own))
    assert (err.code, unserved(err.message)) == (
        "SERVER",
        "model 'wire': error in the stream: 1301: content flagged",
    )


async def test_litellm_s_rate_limit_with_its_code_as_text_is_a_rate_limit() -> None:
    # LiteLLM's proxy: {"error": {"message", "type", "param", "code": "429"}}
    litellm = {"message": "rate limit reached", "type": None, "param": None, "code": "429"}
    err = await failure(in_stream({"error": litellm}))
    assert (err.code, unserved(err.message)) == (
        "RATE_LIMIT",
        "model 'wire': error in the stream: rate limit reached",
    )


async def test_a_status_as_text_does_not_hide_the_type_beside_it() -> None:
    # HTTP 429 whose body says the quota is spent: not retried, whatever form the code has
    quota = {"message": "You exceeded your current quota", "type": "insufficient_quota"}
    for code in (429, "429"):
        payload = {"error": {**quota, "code": code}}
        async with WireServer([error(429, payload), error(429, payload)]) as server:
            err = await fails(openai(server.url))
            sent = len(server.requests)
        assert (code, sent, err.code) == (code, 1, "RATE_LIMIT")
        assert unserved(err.message) == (
            "model 'wire': HTTP 429: insufficient_quota: You exceeded your current quota"
        )
