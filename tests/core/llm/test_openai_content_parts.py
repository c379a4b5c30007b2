"""A ``delta.content`` given as a list of parts (Mistral's reasoning models, magistral or
any model with ``reasoning_effort``) is read: a ``text`` part is the answer's text, a
``thinking`` part's nested text is reasoning, a ``reference`` part (citation ids, no
text) is passed over. A part of another type, or a ``content`` that is neither text nor
a list, is MALFORMED_RESPONSE.

Before: ``openai._pieces`` read only a str ``content``: the list's text and reasoning
were dropped, and the turn ended ``completed`` with an empty answer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_wire import WireServer, collect, sse

from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.llm import Finish, ReasoningDelta, TextDelta
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import ModelRequest, UserMessage

ASK = ModelRequest(messages=(UserMessage(content="hi"),))


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def body(*chunks: dict[str, Any]) -> bytes:
    lines = b"".join(b"data: %s\n\n" % json.dumps(c).encode() for c in chunks)
    return lines + b"data: [DONE]\n\n"


def thinking(*texts: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": [{"type": "text", "text": t} for t in texts]}


REFERENCE = {"type": "reference", "reference_ids": [1]}  # Mistral's citation ids


def text(words: str) -> dict[str, Any]:
    return {"type": "text", "text": words}


def reasoning(message: Any) -> str:
    return "".join(b.text for b in message.content if b.type == "reasoning")


async def answer(*chunks: dict[str, Any]) -> tuple[list[Any], Any]:
    async with WireServer([sse(body(*chunks))]) as server:
        config = ModelConfig(provider="openai-compatible", model="m", base_url=server.url)
        return await collect(OpenAICompatibleModel("wire", config), ASK)


async def test_mistral_thinking_and_text_parts_are_reasoning_and_text() -> None:
    chunks, message = await answer(
        chunk({"role": "assistant", "content": [thinking("Let me ", "think")]}),
        chunk({"content": [thinking(" more.")]}),
        chunk({"content": [text("The answer ")]}),
        chunk({"content": [text("is 42.")]}),
        chunk({}, "stop"),
    )
    assert [c for c in chunks if isinstance(c, ReasoningDelta | TextDelta)] == [
        ReasoningDelta("Let me "),
        ReasoningDelta("think"),
        ReasoningDelta(" more."),
        TextDelta("The answer "),
        TextDelta("is 42."),
    ]
    assert message.text == "The answer is 42."
    assert reasoning(message) == "Let me think more."
    assert chunks[-1] == Finish("stop")


async def test_parts_of_both_kinds_in_one_delta_keep_their_order() -> None:
    chunks, message = await answer(
        chunk({"content": [thinking("hm"), text("Yes."), REFERENCE]}),
        chunk({"content": []}),  # an empty list: nothing
        chunk({}, "stop"),
    )
    assert [c for c in chunks if isinstance(c, ReasoningDelta | TextDelta)] == [
        ReasoningDelta("hm"),
        TextDelta("Yes."),
    ]
    assert (message.text, message.stop_reason) == ("Yes.", "stop")


async def test_a_refusal_beside_an_empty_parts_list_is_still_read() -> None:
    _, message = await answer(chunk({"content": [], "refusal": "No."}), chunk({}, "stop"))
    assert (message.text, message.stop_reason) == ("No.", "error")


async def test_a_refusal_beside_thinking_parts_only_is_still_read() -> None:
    """A delta whose parts are reasoning only has no text: its refusal is the answer
    (it was dropped, and the turn ended ``completed`` with no text)."""
    chunks, message = await answer(
        chunk({"content": [thinking("hm")], "refusal": "I can't help with that."}),
        chunk({}, "stop"),
    )
    assert [c for c in chunks if isinstance(c, ReasoningDelta | TextDelta)] == [
        ReasoningDelta("hm"),
        TextDelta("I can't help with that."),
    ]
    assert (message.text, message.stop_reason) == ("I can't help with that.", "error")
    assert reasoning(message) == "hm"


@pytest.mark.parametrize(
    "content",
    [
        [{"type": "image_url", "image_url": "http://x/a.png"}],  # a part dsh cannot show
        [{"text": "no type"}],
        [text("fine"), "bare"],
        [{"type": "text", "text": 7}],
        [{"type": "thinking", "thinking": [{"type": "audio", "data": "AAAA"}]}],
        [{"type": "thinking", "thinking": {"text": "not a list"}}],
        {"type": "text", "text": "an object, not a list"},
        42,
        True,
    ],
)
async def test_content_dsh_cannot_read_is_malformed_never_dropped(content: Any) -> None:
    reply = sse(body(chunk({"content": content}), chunk({}, "stop")))
    async with WireServer([reply]) as server:
        config = ModelConfig(provider="openai-compatible", model="m", base_url=server.url)
        with pytest.raises(ModelError) as caught:
            await collect(OpenAICompatibleModel("wire", config), ASK)
    assert caught.value.code == "MALFORMED_RESPONSE"
    assert "unreadable chunk" in caught.value.message
