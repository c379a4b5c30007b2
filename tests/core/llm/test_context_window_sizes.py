"""A context-window error carries the sizes the server states: ``ModelError.
context_window`` (the model's window) and ``request_tokens`` (the refused request's),
read from the error bodies llama.cpp, OpenAI (and vLLM) and Anthropic send, served
over real HTTP; None when the server's words hold no numbers. dsh-compaction plans an
overflow's compaction for the server's window with them.

Before: ``ModelError`` had no such attributes; a copy or a pickled ``ModelError``
could not be rebuilt at all (its ``__init__`` was called with the message alone)."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest
from llm_wire import WireServer, collect, error, sse
from test_llm_http import ASK, anthropic, fails, openai

from dsh.errors import ModelError
from dsh.llm._errors import error_from_body, noted

LLAMA = {
    "error": {
        "code": 400,
        "message": "request (14721 tokens) exceeds the available context size (2048 tokens), "
        "try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 14721,
        "n_ctx": 2048,
    }
}
OPENAI = {
    "error": {
        "message": "This model's maximum context length is 8192 tokens. However, your "
        "messages resulted in 9000 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}
ANTHROPIC = {
    "type": "error",
    "error": {
        "type": "invalid_request_error",
        "message": "prompt is too long: 210000 tokens > 200000 maximum",
    },
}


def words(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"error": {"type": kind, "message": message}}


@pytest.mark.parametrize(
    ("payload", "sizes"),
    [
        (LLAMA, (2048, 14721)),
        (OPENAI, (8192, 9000)),
        # llama.cpp's words alone (a proxy that keeps only the message)
        (words(LLAMA["error"]["message"], "exceed_context_size_error"), (2048, 14721)),
        # OpenAI's other wording: the messages' count, the completion's left out
        (
            words(
                "This model's maximum context length is 4,096 tokens. However, you requested "
                "5,000 tokens (4,000 in the messages, 1,000 in the completion).",
                "context_length_exceeded",
            ),
            (4096, 4000),
        ),
        # vLLM
        (
            words(
                "The decoder prompt (length 5000) is longer than the maximum model length of 4096."
            ),
            (4096, 5000),
        ),
        # a window without the request's count
        (
            words("the maximum context length is 8192 tokens", "context_length_exceeded"),
            (8192, None),
        ),
    ],
    ids=["llama.cpp", "openai", "llama.cpp-words", "openai-requested", "vllm", "window-only"],
)
async def test_the_openai_compatible_adapter_reads_the_sizes_the_server_states(
    payload: Any, sizes: tuple[int | None, int | None]
) -> None:
    async with WireServer([error(400, payload)]) as server:
        err = await fails(openai(server.url))
    assert err.code == "CONTEXT_WINDOW_EXCEEDED"
    assert (err.context_window, err.request_tokens) == sizes


@pytest.mark.parametrize(
    ("message", "sizes"),
    [
        ("prompt is too long: 210000 tokens > 200000 maximum", (200000, 210000)),
        (
            "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, "
            "decrease input length or `max_tokens` and try again",
            (200000, 178959),
        ),
    ],
    ids=["prompt-too-long", "input-plus-max-tokens"],
)
async def test_the_anthropic_adapter_reads_the_sizes_the_server_states(
    message: str, sizes: tuple[int, int]
) -> None:
    payload = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    async with WireServer([error(400, payload)]) as server:
        err = await fails(anthropic(server.url))
    assert err.code == "CONTEXT_WINDOW_EXCEEDED"
    assert (err.context_window, err.request_tokens) == sizes


@pytest.mark.parametrize(
    "payload",
    [
        words("the request exceeds the available context size, try increasing it"),
        words("Context size has been exceeded.", "exceed_context_size_error"),
        {"error": {"code": "context_length_exceeded", "message": "Request rejected"}},
    ],
)
async def test_a_context_error_without_numbers_has_no_sizes(payload: Any) -> None:
    async with WireServer([error(400, payload)]) as server:
        err = await fails(openai(server.url))
    assert err.code == "CONTEXT_WINDOW_EXCEEDED"
    assert (err.context_window, err.request_tokens) == (None, None)


async def test_the_same_error_inside_a_stream_carries_its_sizes() -> None:
    body = [b'data: {"choices":[{"index":0,"delta":{"content":"par"}}]}\n\n']
    body.append(b"data: " + json.dumps(LLAMA).encode() + b"\n\n")
    async with WireServer([sse(body)]) as server:
        with pytest.raises(ModelError) as caught:
            await collect(openai(server.url), ASK)
    assert caught.value.code == "CONTEXT_WINDOW_EXCEEDED"
    assert (caught.value.context_window, caught.value.request_tokens) == (2048, 14721)


def test_another_error_has_no_sizes_even_with_numbers_in_its_words() -> None:
    err = error_from_body("m", words("maximum context length is 8192 tokens", "rate_limit_error"))
    assert err.code == "RATE_LIMIT"
    assert (err.context_window, err.request_tokens) == (None, None)


def test_a_noted_copy_a_pickled_error_and_a_plain_one_keep_their_attributes() -> None:
    err = error_from_body("m", ANTHROPIC)
    assert (err.context_window, err.request_tokens) == (200000, 210000)
    assert (noted(err, "note").context_window, noted(err, "note").request_tokens) == (
        200000,
        210000,
    )
    for rebuilt in (copy.copy(err), copy.deepcopy(err), pickle.loads(pickle.dumps(err))):
        assert type(rebuilt) is ModelError
        assert (rebuilt.code, rebuilt.message, str(rebuilt)) == (err.code, err.message, str(err))
        assert (rebuilt.context_window, rebuilt.request_tokens) == (200000, 210000)
    plain = ModelError("SERVER", "busy", retry_after=3.0)
    assert (plain.context_window, plain.request_tokens) == (None, None)
    assert pickle.loads(pickle.dumps(plain)).retry_after == 3.0
