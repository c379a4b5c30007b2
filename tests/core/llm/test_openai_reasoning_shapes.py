"""A delta's ``reasoning`` (or ``reasoning_content``) given as an object: some servers
send ``{"reasoning": {"text": ...}}`` rather than the text. It is read from the
object's ``text``; an object without one, or another type, is MALFORMED_RESPONSE as
other shapes dsh cannot read are.

Before: only a str was read, and any other shape dropped unseen."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_wire import WireServer, collect, sse

from dsh.config import ModelConfig
from dsh.errors import ModelError
from dsh.llm import ReasoningDelta, TextDelta
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import ModelRequest, UserMessage

ASK = ModelRequest(messages=(UserMessage(content="hi"),))


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def body(*chunks: dict[str, Any]) -> bytes:
    lines = b"".join(b"data: %s\n\n" % json.dumps(c).encode() for c in chunks)
    return lines + b"data: [DONE]\n\n"


async def answer(*chunks: dict[str, Any]) -> tuple[list[Any], Any]:
    async with WireServer([sse(body(*chunks))]) as server:
        config = ModelConfig(provider="openai-compatible", model="m", base_url=server.url)
        return await collect(OpenAICompatibleModel("wire", config), ASK)


@pytest.mark.parametrize("field", ["reasoning", "reasoning_content"])
async def test_reasoning_given_as_an_object_with_text_is_read(field: str) -> None:
    chunks, message = await answer(
        chunk({field: {"text": "Let me "}}),
        chunk({field: {"text": "think."}}),
        chunk({field: {"text": ""}, "content": "42."}),
        chunk({}, "stop"),
    )
    assert [c for c in chunks if isinstance(c, ReasoningDelta | TextDelta)] == [
        ReasoningDelta("Let me "),
        ReasoningDelta("think."),
        TextDelta("42."),
    ]
    assert message.text == "42."
    assert [b.text for b in message.content if b.type == "reasoning"] == ["Let me think."]


async def test_reasoning_given_as_text_is_read_as_before() -> None:
    chunks, _ = await answer(chunk({"reasoning": "hm", "content": "Yes."}), chunk({}, "stop"))
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
    reply = sse(body(chunk({"reasoning": reasoning, "content": "ok"}), chunk({}, "stop")))
    async with WireServer([reply]) as server:
        config = ModelConfig(provider="openai-compatible", model="m", base_url=server.url)
        with pytest.raises(ModelError) as caught:
            await collect(OpenAICompatibleModel("wire", config), ASK)
    assert caught.value.code == "MALFORMED_RESPONSE"
    assert "unreadable chunk" in caught.value.message
