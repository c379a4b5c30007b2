"""A character beyond U+FFFF that a server writes as a JSON surrogate pair of escapes
and splits between two deltas (``"a\\ud83d"``, then ``"\\ude00b"``) streams as that
character: no chunk the adapter yields holds a lone half, so the terminal and the
``assistant/chunk`` events (BEHAVIOURS 11) show the character.

Before: only the assembled message joined the halves (``test_assemble_surrogates``);
each chunk held one lone half, which ``dsh run`` printed as ``\\ud83d\\ude00`` and the
session logged as two escapes."""

from __future__ import annotations

import json
from typing import Any

from llm_wire import WireServer, collect, openai_answer, openai_chunk, sse

from dsh.config import ModelConfig
from dsh.llm import ReasoningDelta, TextDelta, ToolCallDelta
from dsh.llm.anthropic import AnthropicModel
from dsh.messages import ModelRequest, UserMessage

HIGH, LOW = "\ud83d", "\ude00"  # U+1F600 as UTF-16
SMILE = "\U0001f600"


def lone(text: str) -> bool:
    return any(0xD800 <= ord(char) <= 0xDFFF for char in text)


def texts(chunks: list[Any], kind: type) -> list[str]:
    return [chunk.text for chunk in chunks if isinstance(chunk, kind)]


async def test_openai_text_split_between_deltas_streams_the_character() -> None:
    chunks, answer = await openai_answer(
        openai_chunk({"content": "smile " + HIGH}),
        openai_chunk({"content": LOW + " done"}, "stop"),
    )
    streamed = texts(chunks, TextDelta)
    assert not any(lone(text) for text in streamed), streamed
    assert "".join(streamed) == answer.text == f"smile {SMILE} done"


async def test_openai_a_delta_of_the_low_half_alone() -> None:
    chunks, answer = await openai_answer(
        openai_chunk({"content": HIGH}),
        openai_chunk({"content": LOW}),
        openai_chunk({"content": "!"}, "stop"),
    )
    assert texts(chunks, TextDelta) == [SMILE, "!"]
    assert answer.text == SMILE + "!"


async def test_openai_reasoning_split_between_deltas_streams_the_character() -> None:
    chunks, _ = await openai_answer(
        openai_chunk({"reasoning_content": "hm " + HIGH}),
        openai_chunk({"reasoning_content": LOW}),
        openai_chunk({"content": "ok"}, "stop"),
    )
    assert texts(chunks, ReasoningDelta) == ["hm ", SMILE]


async def test_a_half_with_no_other_half_still_comes_in_its_place() -> None:
    """A high half before a tool call, and one at the end: nothing to pair, so each
    comes as it came, in its place (before the call; before the finish)."""
    call = {"index": 0, "id": "c1", "type": "function"}
    chunks, answer = await openai_answer(
        openai_chunk({"content": "a" + HIGH}),
        openai_chunk({"tool_calls": [{**call, "function": {"name": "ls", "arguments": "{}"}}]}),
        openai_chunk({"content": "b" + HIGH}, "tool_calls"),
    )
    kinds = [(type(c).__name__, getattr(c, "text", None)) for c in chunks[:4]]
    assert kinds == [
        ("TextDelta", "a"),
        ("TextDelta", HIGH),
        ("ToolCallDelta", None),
        ("TextDelta", "b"),
    ]
    assert isinstance(chunks[2], ToolCallDelta)
    assert texts(chunks, TextDelta)[-1] == HIGH
    assert answer.content[0].text == "a" + HIGH  # type: ignore[union-attr]


async def test_anthropic_text_split_between_deltas_streams_the_character() -> None:
    def delta(text: str) -> dict[str, Any]:
        piece = {"type": "text_delta", "text": text}
        return {"type": "content_block_delta", "index": 0, "delta": piece}

    events = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 3}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        delta("smile " + HIGH),
        delta(LOW + " done"),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
        {"type": "message_stop"},
    ]
    body = b"".join(b"data: %s\n\n" % json.dumps(e).encode() for e in events)
    async with WireServer([sse(body)]) as server:
        config = ModelConfig(provider="anthropic", model="claude-x", base_url=server.url)
        model = AnthropicModel("claude", config, env={})
        chunks, answer = await collect(model, ModelRequest(messages=(UserMessage(content="hi"),)))
    streamed = texts(chunks, TextDelta)
    assert not any(lone(text) for text in streamed), streamed
    assert "".join(streamed) == answer.text == f"smile {SMILE} done"
