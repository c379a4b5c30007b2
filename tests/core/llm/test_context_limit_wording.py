"""Anthropic's refusal of a prompt whose length plus ``max_tokens`` is over the model's
context ("input length and `max_tokens` exceed context limit: ...") is
CONTEXT_WINDOW_EXCEEDED, as "prompt is too long" is, so dsh-compaction's overflow
recovery runs (behaviour 13: the turn ends with the provider's code).

Before: the wording was not among ``dsh.llm._errors._CONTEXT_WORDS`` and the error was
INVALID_REQUEST (its type is ``invalid_request_error``)."""

from __future__ import annotations

import json

import pytest

from dsh.llm._errors import error_from_body, error_from_status

SAID = (
    "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, "
    "decrease input length or `max_tokens` and try again"
)
BODY = {"type": "error", "error": {"type": "invalid_request_error", "message": SAID}}


def test_an_http_400_saying_it_exceeds_the_context_limit_is_a_context_error() -> None:
    error, retry = error_from_status("sonnet", 400, json.dumps(BODY).encode(), {})
    assert (error.code, retry) == ("CONTEXT_WINDOW_EXCEEDED", False)
    assert "exceed context limit: 178959 + 64000 > 200000" in error.message


def test_the_same_error_inside_the_stream_is_a_context_error() -> None:
    assert error_from_body("sonnet", BODY).code == "CONTEXT_WINDOW_EXCEEDED"


@pytest.mark.parametrize(
    "said",
    ["the rate limit was exceeded", "tool_use ids must be unique", "invalid limit: -1"],
)
def test_other_invalid_requests_stay_invalid_requests(said: str) -> None:
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": said}}
    assert error_from_status("m", 400, json.dumps(body).encode(), {})[0].code == "INVALID_REQUEST"
