"""Context-window errors in the words of more servers, as they send them: each is
CONTEXT_WINDOW_EXCEEDED (dsh-compaction's overflow recovery runs) with the sizes it
states. Before: Gemini's OpenAI-compatible endpoint ("The input token count (132478)
exceeds the maximum number of tokens allowed (131072).") was INVALID_REQUEST, and its
body, a JSON list of one error (``[{"error": {...}}]``), was not read (its Python repr
was the message); vLLM's "your request has 5000 input tokens", OpenRouter's "(5000 of
text input, ...)" and SGLang's "The input (5000 tokens)" gave no ``request_tokens``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_wire import WireServer, error, unserved
from test_llm_http import fails, openai

from dsh.llm._errors import error_from_status

GEMINI = "The input token count (132478) exceeds the maximum number of tokens allowed (131072)."
VLLM = (
    "This model's maximum context length is 4096 tokens. However, your request has 5000 "
    "input tokens. Please reduce the length of the input messages."
)
OPENROUTER = (
    "This endpoint's maximum context length is 8192 tokens. However, you requested about "
    "9000 tokens (5000 of text input, 4000 in the output). Please reduce the length of "
    'either one, or use the "middle-out" transform to compress your prompt automatically.'
)
#: with tools the request's tokens are the text input's and the tool input's (was: the
#: text input's only, 81684)
OPENROUTER_TOOLS = (
    "This endpoint's maximum context length is 200000 tokens. However, you requested "
    "about 205432 tokens (81684 of text input, 3748 of tool input, 120000 in the output). "
    'Please reduce the length of either one, or use the "middle-out" transform to compress '
    "your prompt automatically."
)
SGLANG = "The input (5000 tokens) is longer than the model's context length (4096 tokens)."


def gemini(code: int, message: str, status: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status}}


@pytest.mark.parametrize(
    ("payload", "sizes"),
    [
        (gemini(400, GEMINI, "INVALID_ARGUMENT"), (131072, 132478)),
        ([gemini(400, GEMINI, "INVALID_ARGUMENT")], (131072, 132478)),
        ({"error": {"message": VLLM, "type": "BadRequestError", "code": 400}}, (4096, 5000)),
        ({"error": {"message": OPENROUTER, "code": 400}}, (8192, 5000)),
        ({"error": {"message": OPENROUTER_TOOLS, "code": 400}}, (200000, 85432)),
        (
            {"object": "error", "message": SGLANG, "type": "BadRequestError", "code": 400},
            (4096, 5000),
        ),
    ],
    ids=["gemini", "gemini-list", "vllm", "openrouter", "openrouter-tools", "sglang"],
)
def test_a_context_error_is_one_with_the_sizes_it_states(
    payload: Any, sizes: tuple[int, int]
) -> None:
    err, retry = error_from_status("m", 400, json.dumps(payload).encode(), {})
    assert (err.code, retry) == ("CONTEXT_WINDOW_EXCEEDED", False)
    assert (err.context_window, err.request_tokens) == sizes


async def test_a_list_of_errors_is_read_as_its_first_over_http() -> None:
    said = "Resource has been exhausted (e.g. check quota)."
    body = [gemini(429, said, "RESOURCE_EXHAUSTED")]
    async with WireServer([error(429, body)]) as server:
        err = await fails(openai(server.url, max_retries=0))
    assert (err.code, unserved(err.message)) == ("RATE_LIMIT", f"model 'wire': HTTP 429: {said}")


def test_the_words_of_an_output_cap_over_the_limit_are_not_a_context_error() -> None:
    said = "max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens"
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": said}}
    err, _ = error_from_status("m", 400, json.dumps(body).encode(), {})
    assert err.code == "INVALID_REQUEST"
