"""A usage count that is not a count (text, ``true``, a negative or fractional number, an
object where a number or a mapping belongs) is counted as 0 with a warning, once per
model and field, naming the model and the field, never the value (a server may echo
anything there); the answer it came with is kept. Usage is bookkeeping: a server's
mistake in it is no reason to discard a finished answer.

Before: such a chunk ended the turn MALFORMED_RESPONSE (OpenAI-compatible: a pydantic
ValidationError of several lines in turn/end's message; Anthropic: a TypeError), the
finished answer discarded."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from llm_wire import WireServer, collect, sse

from dsh.config import ModelConfig
from dsh.llm.anthropic import AnthropicModel
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import ModelRequest, Usage, UserMessage

ASK = ModelRequest(messages=(UserMessage(content="hi"),))
KEY = "sk-live-SECRET-0123456789"


def events(*items: dict[str, Any], done: bool = True) -> bytes:
    body = b"".join(b"data: %s\n\n" % json.dumps(item).encode() for item in items)
    return body + (b"data: [DONE]\n\n" if done else b"")


async def openai_usage(usage: Any) -> tuple[str, Any]:
    finished = {"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}
    body = events(finished, {"choices": [], "usage": usage})
    name = "usage"
    async with WireServer([sse(body)]) as server:
        config = ModelConfig(
            provider="openai-compatible", model="m", base_url=server.url, api_key_env="K"
        )
        model = OpenAICompatibleModel(name, config, env={"K": KEY})
        _, message = await collect(model, ASK)
    assert message.text == "hi"  # the answer is kept
    return name, message.usage


@pytest.mark.parametrize(
    ("usage", "counted"),
    [
        ({"prompt_tokens": "text", "completion_tokens": 3}, Usage(output_tokens=3)),
        ({"prompt_tokens": KEY, "completion_tokens": 3}, Usage(output_tokens=3)),
        ({"prompt_tokens": True, "completion_tokens": -2}, Usage()),
        ({"prompt_tokens": 7.5, "completion_tokens": [1]}, Usage()),
        ({"prompt_tokens": 7, "prompt_tokens_details": "none"}, Usage(input_tokens=7)),
        ({"prompt_tokens": 7, "prompt_cache_hit_tokens": {"n": 1}}, Usage(input_tokens=7)),
        # too long to be a count: no ValueError from int()'s limit of 4300 digits
        ({"prompt_tokens": "9" * 4301, "completion_tokens": 3}, Usage(output_tokens=3)),
        ({"prompt_tokens": "9" * 16, "completion_tokens": 3}, Usage(output_tokens=3)),
        ({"prompt_tokens": 1e300, "completion_tokens": 2**53 + 1}, Usage()),
    ],
)
async def test_an_unreadable_openai_count_is_0_with_a_warning(
    usage: dict[str, Any], counted: Usage, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        name, got = await openai_usage(usage)
    assert got == counted
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert said and all(f"model {name!r}" in line for line in said), said
    assert "counted as 0" in said[0] or "its counts are 0" in said[0]
    assert not any(KEY in line or KEY[:12] in line for line in said)


async def test_counts_as_numbers_and_their_text_are_read(caplog: pytest.LogCaptureFixture) -> None:
    usage = {"prompt_tokens": 12.0, "completion_tokens": "5", "prompt_cache_hit_tokens": 4}
    with caplog.at_level(logging.WARNING):
        _, got = await openai_usage(usage)
    assert got == Usage(input_tokens=12, output_tokens=5, cache_read_tokens=4)
    usage = {"prompt_tokens": "9" * 15, "completion_tokens": 2**53}
    with caplog.at_level(logging.WARNING):
        _, got = await openai_usage(usage)
    assert got == Usage(input_tokens=int("9" * 15), output_tokens=2**53)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_the_warning_names_the_kind_with_its_article(
    caplog: pytest.LogCaptureFixture,
) -> None:
    usage = {"prompt_tokens": -1, "prompt_tokens_details": "none"}
    with caplog.at_level(logging.WARNING):
        name, _ = await openai_usage(usage)
    said = sorted(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert said == [
        f"model {name!r}: the usage's prompt_tokens is not a count (an int): counted as 0",
        f"model {name!r}: the usage's prompt_tokens_details is not an object of counts"
        " (a str): its counts are 0",
    ]


async def test_a_usage_or_x_groq_that_is_no_object_is_no_usage(
    caplog: pytest.LogCaptureFixture,
) -> None:
    finished = {"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}
    for last in ({"choices": [], "x_groq": "abc"}, {"choices": [], "usage": [1]}):
        async with WireServer([sse(events(finished, last))]) as server:
            config = ModelConfig(provider="openai-compatible", model="m", base_url=server.url)
            with caplog.at_level(logging.WARNING):
                _, message = await collect(OpenAICompatibleModel("usage", config), ASK)
        assert (message.text, message.usage) == ("hi", Usage())
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("x_groq is not an object of counts" in line for line in said), said


@pytest.mark.parametrize(
    ("start", "later", "counted"),
    [
        ({"input_tokens": 5}, [1], Usage(input_tokens=5)),
        ("abc", {"output_tokens": 4}, Usage(output_tokens=4)),
    ],
)
async def test_an_anthropic_usage_that_is_no_object_is_no_usage(
    start: Any, later: Any, counted: Usage
) -> None:
    items = [
        {"type": "message_start", "message": {"usage": start}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": later},
        {"type": "message_stop"},
    ]
    async with WireServer([sse(events(*items, done=False))]) as server:
        config = ModelConfig(provider="anthropic", model="c", base_url=server.url)
        _, message = await collect(AnthropicModel("anthropic", config), ASK)
    assert (message.text, message.usage) == ("hi", counted)


async def test_the_warning_comes_once_per_model_and_field(caplog: pytest.LogCaptureFixture) -> None:
    bad = {"prompt_tokens": "x", "completion_tokens": 1}
    chunks = [{"choices": [{"index": 0, "delta": {"content": "a"}}], "usage": bad}] * 5
    finished = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": bad}
    async with WireServer([sse(events(*chunks, finished))]) as server:
        config = ModelConfig(provider="openai-compatible", model="m", base_url=server.url)
        with caplog.at_level(logging.WARNING):
            _, message = await collect(OpenAICompatibleModel("usage", config), ASK)
    assert message.usage == Usage(output_tokens=1)
    assert len([r for r in caplog.records if "prompt_tokens" in r.getMessage()]) == 1


async def test_an_unreadable_anthropic_count_is_0(caplog: pytest.LogCaptureFixture) -> None:
    start = {"type": "message_start", "message": {"usage": {"input_tokens": "many"}}}
    items = [
        start,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 4, "cache_read_input_tokens": "x"},
        },
        {"type": "message_stop"},
    ]
    async with WireServer([sse(events(*items, done=False))]) as server:
        config = ModelConfig(provider="anthropic", model="c", base_url=server.url)
        with caplog.at_level(logging.WARNING):
            _, message = await collect(AnthropicModel("anthropic", config), ASK)
    assert (message.text, message.usage) == ("hi", Usage(output_tokens=4))
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "input_tokens" in said and "cache_read_input_tokens" in said


def test_a_malformed_chunks_error_is_one_line() -> None:
    from pydantic import ValidationError

    from dsh.llm._errors import malformed

    try:
        Usage(input_tokens="text", output_tokens=[1])  # type: ignore[arg-type]
    except ValidationError as exc:
        error = malformed("m", "chunk", '{"usage": ...}', exc, KEY)
    assert error.code == "MALFORMED_RESPONSE"
    assert "\n" not in error.message and "input_tokens" in error.message
