"""The words for a cut-off or refused answer that gateways pass on from other APIs are
known: Anthropic's ``max_tokens`` and Gemini's ``MAX_TOKENS`` are ``max_tokens``;
Anthropic's ``refusal`` and Gemini's ``SAFETY``, ``RECITATION``, ``PROHIBITED_CONTENT``,
``BLOCKLIST`` and ``SPII`` are ``error`` as ``content_filter`` is (the turn ends
``REFUSED``, the word its detail), in any case.

Before: the table knew the same sources' words for a natural end (``STOP``,
``end_turn``) but not these: a truncated or filtered answer ended the turn
``completed`` as a whole one."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_wire import WireServer, collect, sse

from dsh.config import ModelConfig
from dsh.llm import Finish
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import ModelRequest, UserMessage

ASK = ModelRequest(messages=(UserMessage(content="hi"),))


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    data = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(data).encode() + b"\n\n"


async def answer(reason: str) -> tuple[list[Any], Any]:
    body = [chunk({"content": "The answer is"}), chunk({}, reason), b"data: [DONE]\n\n"]
    async with WireServer([sse(body)]) as server:
        config = ModelConfig(provider="openai-compatible", model="m", base_url=server.url)
        return await collect(OpenAICompatibleModel("wire", config), ASK)


@pytest.mark.parametrize("reason", ["max_tokens", "MAX_TOKENS"])
async def test_a_cut_off_answers_word_is_max_tokens(reason: str) -> None:
    chunks, message = await answer(reason)
    assert chunks[-1] == Finish("max_tokens")
    assert (message.text, message.stop_reason) == ("The answer is", "max_tokens")


@pytest.mark.parametrize(
    "reason",
    [
        "content_filter",
        "refusal",
        "SAFETY",
        "RECITATION",
        "PROHIBITED_CONTENT",
        "BLOCKLIST",
        "SPII",
    ],
)
async def test_a_refused_answers_word_is_an_error_stop_named(reason: str) -> None:
    chunks, message = await answer(reason)
    assert chunks[-1] == Finish("error", detail=reason)
    assert (message.text, message.stop_reason) == ("The answer is", "error")


@pytest.mark.parametrize(
    "reason", ["model_context_window_exceeded", "MODEL_CONTEXT_WINDOW_EXCEEDED"]
)
async def test_anthropics_full_context_window_passed_on_is_max_tokens(reason: str) -> None:
    chunks, message = await answer(reason)
    assert chunks[-1] == Finish("max_tokens")
    assert message.stop_reason == "max_tokens"


@pytest.mark.parametrize(
    "reason",
    [
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "IMAGE_OTHER",
        "NO_IMAGE",
        "TOO_MANY_TOOL_CALLS",
        "MISSING_THOUGHT_SIGNATURE",
        "OTHER",
    ],
)
async def test_the_rest_of_geminis_cut_words_are_an_error_stop_named(reason: str) -> None:
    """Gemini's other finish reasons than STOP and MAX_TOKENS each mean the answer was
    stopped, blocked or broken: they were ``stop``, the turn ``completed``."""
    chunks, message = await answer(reason)
    assert chunks[-1] == Finish("error", detail=reason)
    assert (message.text, message.stop_reason) == ("The answer is", "error")


@pytest.mark.parametrize(
    ("reason", "said"),
    [
        ("MALFORMED_FUNCTION_CALL", "the model's tool call was malformed"),
        ("UNEXPECTED_TOOL_CALL", "a tool call, with no tools in the request"),
        ("LANGUAGE", "a language the model does not support"),
    ],
)
async def test_geminis_broken_call_and_language_words_say_what_they_mean(
    reason: str, said: str
) -> None:
    """A Gemini MALFORMED_FUNCTION_CALL (a broken tool call, dropped: the answer is
    often empty) ended the turn ``completed``, the call lost unseen."""
    chunks, message = await answer(reason)
    assert chunks[-1] == Finish("error", detail=f"{reason}: {said}")
    assert message.stop_reason == "error"
    assert len(chunks[-1].detail or "") <= 80  # the turn's message names 80 characters
