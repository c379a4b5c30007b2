"""A ``delta.content`` given as a list of parts (Mistral's reasoning models, magistral or
any model with ``reasoning_effort``) is read: a ``text`` part is the answer's text, a
``thinking`` part's nested text is reasoning, a ``reference`` part (citation ids, no
text) is passed over. A part of another type, or a ``content`` that is neither text nor
a list, is MALFORMED_RESPONSE.

Before: ``openai._pieces`` read only a str ``content``: the list's text and reasoning
were dropped, and the turn ended ``completed`` with an empty answer."""

from __future__ import annotations

from typing import Any

import pytest
from llm_wire import openai_answer, openai_chunk, openai_unreadable

from dsh.llm import Finish, ReasoningDelta, TextDelta


def thinking(*texts: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": [{"type": "text", "text": t} for t in texts]}


REFERENCE = {"type": "reference", "reference_ids": [1]}  # Mistral's citation ids


def text(words: str) -> dict[str, Any]:
    return {"type": "text", "text": words}


def reasoning(message: Any) -> str:
    return "".join(b.text for b in message.content if b.type == "reasoning")


async def test_mistral_thinking_and_text_parts_are_reasoning_and_text() -> None:
    chunks, message = await openai_answer(
        openai_chunk({"role": "assistant", "content": [thinking("Let me ", "think")]}),
        openai_chunk({"content": [thinking(" more.")]}),
        openai_chunk({"content": [text("The answer ")]}),
        openai_chunk({"content": [text("is 42.")]}),
        openai_chunk({}, "stop"),
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
    chunks, message = await openai_answer(
        openai_chunk({"content": [thinking("hm"), text("Yes."), REFERENCE]}),
        openai_chunk({"content": []}),  # an empty list: nothing
        openai_chunk({}, "stop"),
    )
    assert [c for c in chunks if isinstance(c, ReasoningDelta | TextDelta)] == [
        ReasoningDelta("hm"),
        TextDelta("Yes."),
    ]
    assert (message.text, message.stop_reason) == ("Yes.", "stop")


async def test_a_refusal_beside_an_empty_parts_list_is_still_read() -> None:
    _, message = await openai_answer(
        openai_chunk({"content": [], "refusal": "No."}), openai_chunk({}, "stop")
    )
    assert (message.text, message.stop_reason) == ("No.", "error")


async def test_a_refusal_beside_thinking_parts_only_is_still_read() -> None:
    """A delta whose parts are reasoning only has no text: its refusal is the answer
    (it was dropped, and the turn ended ``completed`` with no text)."""
    chunks, message = await openai_answer(
        openai_chunk({"content": [thinking("hm")], "refusal": "I can't help with that."}),
        openai_chunk({}, "stop"),
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
    await openai_unreadable(openai_chunk({"content": content}), openai_chunk({}, "stop"))
