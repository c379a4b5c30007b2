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


def call_piece(index: int, arguments: str, **more: str) -> dict[str, Any]:
    function = {"arguments": arguments, **({"name": more["name"]} if "name" in more else {})}
    piece: dict[str, Any] = {"index": index, "function": function}
    if "id" in more:
        piece.update(id=more["id"], type="function")
    return piece


async def test_openai_arguments_split_between_pieces_reach_the_tool_as_the_character() -> None:
    """The arguments are JSON text in a JSON string: a server escaping the pair at the
    outer level and cutting between the escapes gave the call two lone halves, and
    ``write`` failed (``content cannot be written as UTF-8: surrogates not allowed``)."""
    first = call_piece(0, '{"path": "e.txt", "content": "smile ' + HIGH, id="c1", name="write")
    chunks, answer = await openai_answer(
        openai_chunk({"tool_calls": [first]}),
        openai_chunk({"tool_calls": [call_piece(0, LOW + ' ok"}')]}, "tool_calls"),
    )
    pieces = [c.arguments for c in chunks if isinstance(c, ToolCallDelta)]
    assert not any(lone(piece) for piece in pieces), pieces
    (call,) = answer.tool_calls
    assert json.loads(call.arguments) == {"path": "e.txt", "content": f"smile {SMILE} ok"}


async def test_openai_two_calls_interleaved_each_keeps_its_half() -> None:
    chunks, answer = await openai_answer(
        openai_chunk(
            {
                "tool_calls": [
                    call_piece(0, '{"a": "x' + HIGH, id="c1", name="one"),
                    call_piece(1, '{"b": "' + HIGH, id="c2", name="two"),
                ]
            }
        ),
        openai_chunk({"tool_calls": [call_piece(1, LOW + '"}'), call_piece(0, LOW + '"}')]}),
        openai_chunk({}, "tool_calls"),
    )
    assert [json.loads(call.arguments) for call in answer.tool_calls] == [
        {"a": "x" + SMILE},
        {"b": SMILE},
    ]
    assert not any(lone(c.arguments) for c in chunks if isinstance(c, ToolCallDelta))


async def test_openai_a_call_ending_in_a_half_keeps_it() -> None:
    """Nothing came to pair it with: the half comes as it came, before the finish."""
    _, answer = await openai_answer(
        openai_chunk({"tool_calls": [call_piece(0, '"' + HIGH, id="c1", name="one")]}),
        openai_chunk({}, "tool_calls"),
    )
    assert answer.tool_calls[0].arguments == '"' + HIGH


async def test_anthropic_input_split_between_pieces_reaches_the_tool_as_the_character() -> None:
    def piece(text: str) -> dict[str, Any]:
        delta = {"type": "input_json_delta", "partial_json": text}
        return {"type": "content_block_delta", "index": 0, "delta": delta}

    use = {"type": "tool_use", "id": "t1", "name": "write", "input": {}}
    events = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 3}}},
        {"type": "content_block_start", "index": 0, "content_block": use},
        piece('{"content": "smile ' + HIGH),
        piece(LOW + '"}'),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}},
        {"type": "message_stop"},
    ]
    body = b"".join(b"data: %s\n\n" % json.dumps(e).encode() for e in events)
    async with WireServer([sse(body)]) as server:
        config = ModelConfig(provider="anthropic", model="claude-x", base_url=server.url)
        model = AnthropicModel("claude", config, env={})
        chunks, answer = await collect(model, ModelRequest(messages=(UserMessage(content="hi"),)))
    assert not any(lone(c.arguments) for c in chunks if isinstance(c, ToolCallDelta))
    assert json.loads(answer.tool_calls[0].arguments) == {"content": f"smile {SMILE}"}
