"""A delta's ``reasoning`` (or ``reasoning_content``) given as an object: some servers
send ``{"reasoning": {"text": ...}}`` rather than the text. It is read from the
object's ``text``; an object without one, or another type, is MALFORMED_RESPONSE as
other shapes dsh cannot read are.

Before: only a str was read, and any other shape dropped unseen."""

from __future__ import annotations

from typing import Any

import pytest
from llm_wire import openai_answer, openai_chunk, openai_unreadable

from dsh.llm import ReasoningDelta, TextDelta


@pytest.mark.parametrize("field", ["reasoning", "reasoning_content"])
async def test_reasoning_given_as_an_object_with_text_is_read(field: str) -> None:
    chunks, message = await openai_answer(
        openai_chunk({field: {"text": "Let me "}}),
        openai_chunk({field: {"text": "think."}}),
        openai_chunk({field: {"text": ""}, "content": "42."}),
        openai_chunk({}, "stop"),
    )
    assert [c for c in chunks if isinstance(c, ReasoningDelta | TextDelta)] == [
        ReasoningDelta("Let me "),
        ReasoningDelta("think."),
        TextDelta("42."),
    ]
    assert message.text == "42."
    assert [b.text for b in message.content if b.type == "reasoning"] == ["Let me think."]


async def test_reasoning_given_as_text_is_read_as_before() -> None:
    chunks, _ = await openai_answer(
        openai_chunk({"reasoning": "hm", "content": "Yes."}), openai_chunk({}, "stop")
    )
    assert [c for c in chunks if isinstance(c, ReasoningDelta | TextDelta)] == [
        ReasoningDelta("hm"),
        TextDelta("Yes."),
    ]


@pytest.mark.parametrize(
    "reasoning",
    [
        {"summary": "no text field"},
        {"text": 7},
        ["a", "list"],
        42,
        True,
    ],
)
async def test_reasoning_dsh_cannot_read_is_malformed_never_dropped(reasoning: Any) -> None:
    await openai_unreadable(
        openai_chunk({"reasoning": reasoning, "content": "ok"}), openai_chunk({}, "stop")
    )
