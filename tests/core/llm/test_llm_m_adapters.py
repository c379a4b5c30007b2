"""Both adapters, continued: what each stop reason becomes, the pieces lenient servers
send, the request body and headers each builds, and the connection after the last event."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from llm_wire import WireServer, by_event, collect, recorded, sse
from test_llm_http import ASK, TEXT, anthropic, fails, openai
from test_llm_openai import chunk

from dsh.config import ModelConfig
from dsh.llm import ReasoningDelta, UsageChunk
from dsh.llm.anthropic import AnthropicModel
from dsh.llm.openai import OpenAICompatibleModel
from dsh.messages import (
    AssistantMessage,
    ModelRequest,
    ReasoningBlock,
    TextBlock,
    ToolCall,
    ToolSpec,
    Usage,
    UserMessage,
)

DONE = b"data: [DONE]\n\n"
ANTHROPIC_TEXT = recorded("anthropic_max_tokens.sse")


def data(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


# -- OpenAI-compatible streams -----------------------------------------------------------


@pytest.mark.parametrize(
    ("finish", "stop"),
    [
        ("content_filter", "error"),
        ("insufficient_system_resource", "error"),
        ("eos", "stop"),  # Together's word for a natural end
        ("some_new_reason", "stop"),  # a reason dsh does not know ends a text answer
        (None, "stop"),  # no reason at all
    ],
)
async def test_openai_finish_reasons(finish: str | None, stop: str) -> None:
    body = [chunk({"content": "Hi"}), chunk({}, finish), DONE]
    async with WireServer([sse(body)]) as server:
        _, message = await collect(openai(server.url), ASK)
    assert (message.text, message.stop_reason) == ("Hi", stop)


async def test_reasoning_under_either_field_name_and_empty_fields_add_nothing() -> None:
    body = [
        chunk({"reasoning": "think"}),  # vLLM, OpenRouter, Ollama
        chunk({"reasoning": "", "content": "Hi", "tool_calls": []}),
        data({"choices": [], "usage": {}}),
        data({"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 5}}),
        chunk({}, "stop"),
        DONE,
    ]
    async with WireServer([sse(body)]) as server:
        chunks, message = await collect(openai(server.url), ASK)
    assert message.content == (ReasoningBlock(text="think"), TextBlock(text="Hi"))
    assert [c for c in chunks if isinstance(c, ReasoningDelta)] == [ReasoningDelta("think")]
    assert [c for c in chunks if isinstance(c, UsageChunk)] == [
        UsageChunk(Usage(input_tokens=100, output_tokens=5))
    ]


async def test_deepseek_cache_hits_alone_are_counted() -> None:
    usage = {"prompt_tokens": 100, "completion_tokens": 5, "prompt_cache_hit_tokens": 64}
    body = [chunk({"content": "Hi"}, "stop"), data({"choices": [], "usage": usage}), DONE]
    async with WireServer([sse(body)]) as server:
        _, message = await collect(openai(server.url), ASK)
    assert message.usage == Usage(input_tokens=100, output_tokens=5, cache_read_tokens=64)


def calls(*pieces: dict[str, Any]) -> bytes:
    return chunk({"tool_calls": list(pieces)})


async def test_tool_call_pieces_from_lenient_servers_assemble() -> None:
    body = [
        calls({"index": 0, "id": "a", "type": "function", "function": {"name": "read"}}),
        calls({"index": 0, "id": "", "function": {"name": "", "arguments": None}}),
        calls({"index": 0, "id": "", "function": {"name": "", "arguments": '{"p": 1}'}}),
        calls({"index": 1, "id": "b", "type": "function"}),  # no function object yet
        calls({"index": 1, "function": {"name": "list", "arguments": {"d": 2}}}),  # an object
        chunk({}, "tool_calls"),
        DONE,
    ]
    async with WireServer([sse(body)]) as server:
        _, message = await collect(openai(server.url), ASK)
    assert message.tool_calls == [
        ToolCall(id="a", name="read", arguments='{"p": 1}'),
        ToolCall(id="b", name="list", arguments='{"d": 2}'),
    ]


async def test_tool_call_pieces_without_an_index_go_by_their_position() -> None:
    first = [{"id": "a", "function": {"name": "one"}}, {"id": "b", "function": {"name": "two"}}]
    rest = [{"function": {"arguments": '{"x": 1}'}}, {"function": {"arguments": "{}"}}]
    body = [calls(*first), calls(*rest), chunk({}, "tool_calls"), DONE]
    async with WireServer([sse(body)]) as server:
        _, message = await collect(openai(server.url), ASK)
    assert message.tool_calls == [
        ToolCall(id="a", name="one", arguments='{"x": 1}'),
        ToolCall(id="b", name="two", arguments="{}"),
    ]


@pytest.mark.parametrize(
    "bad",
    [
        '"upstream error"',
        "[1, 2]",
        '{"choices": [5]}',
        '{"choices": {"0": {}}}',
        '{"choices": [{"delta": {"tool_calls": [{"function": "read"}]}}]}',
    ],
)
async def test_a_chunk_of_the_wrong_shape_is_malformed_and_quoted(bad: str) -> None:
    body = [chunk({"content": "Hi"}), b"data: " + bad.encode() + b"\n\n", DONE]
    async with WireServer([sse(body)]) as server:
        err = await fails(openai(server.url))
    assert err.code == "MALFORMED_RESPONSE"
    assert repr(bad) in err.message


# -- OpenAI-compatible requests ------------------------------------------------------------


def openai_model(url: str = "http://x/v1", **kwargs: Any) -> OpenAICompatibleModel:
    settings = kwargs.pop("settings", {})
    config = ModelConfig(provider="openai-compatible", model="m", base_url=url, **settings)
    return OpenAICompatibleModel("wire", config, env={}, **kwargs)


def test_openai_body_leaves_out_what_is_not_set_and_options_win() -> None:
    body = openai_model().request_body(ASK)
    assert set(body) == {"model", "messages", "stream", "stream_options"}
    capped = openai_model(settings={"max_output_tokens": 100})
    assert capped.request_body(ASK.model_copy(update={"max_tokens": 20}))["max_tokens"] == 20
    options = {"max_tokens": 7, "stream_options": {"include_usage": False}, "model": "other"}
    body = capped.request_body(ASK.model_copy(update={"options": options}))
    assert {k: body[k] for k in options} == options


def test_openai_constructor_options_choose_reasoning_and_the_cap_field() -> None:
    turn = AssistantMessage(
        content=(ReasoningBlock(text="plan"), ToolCall(id="c", name="n", arguments="{}"))
    )
    request = ModelRequest(messages=(turn,), max_tokens=9)
    quiet = openai_model(send_reasoning=False, max_tokens_field="max_completion_tokens")
    body = quiet.request_body(request)
    assert "reasoning_content" not in body["messages"][0]
    assert (body["max_completion_tokens"], "max_tokens" in body) == (9, False)
    config = ModelConfig(provider="openai", base_url="http://x/v1")
    loud = OpenAICompatibleModel("o", config, env={}, send_reasoning=True, max_tokens_field="n")
    body = loud.request_body(request)
    assert (body["messages"][0]["reasoning_content"], body["n"]) == ("plan", 9)


def test_an_assistant_turn_with_nothing_to_say_is_sent_as_empty_text() -> None:
    turn = AssistantMessage(content=(ReasoningBlock(text="hmm"),))
    body = openai_model().request_body(ModelRequest(messages=(turn,)))
    assert body["messages"] == [{"role": "assistant", "content": ""}]


@pytest.mark.parametrize("adapter", [openai, anthropic])
async def test_a_model_without_a_key_sends_no_key_header(adapter: Any) -> None:
    reply = sse(ANTHROPIC_TEXT if adapter is anthropic else TEXT)
    async with WireServer([reply]) as server:
        await collect(adapter(server.url, api_key_env=None), ASK)
    sent = server.requests[0].headers
    assert "authorization" not in sent and "x-api-key" not in sent
    assert sent["accept"] == "text/event-stream"


# -- Anthropic streams -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reason", "stop"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("pause_turn", "paused"),
        ("refusal", "error"),
        ("model_context_window_exceeded", "max_tokens"),
        ("some_new_reason", "stop"),  # a reason dsh does not know ends a text answer
    ],
)
async def test_anthropic_stop_reasons(reason: str, stop: str) -> None:
    body = ANTHROPIC_TEXT.replace(
        b'"stop_reason":"max_tokens"', f'"stop_reason":"{reason}"'.encode()
    )
    assert body != ANTHROPIC_TEXT
    async with WireServer([sse(body)]) as server:
        _, message = await collect(anthropic(server.url), ASK)
    assert message.stop_reason == stop


def event(obj: dict[str, Any]) -> bytes:
    return f"event: {obj['type']}\n".encode() + data(obj)


async def test_whole_blocks_sent_in_their_start_events_are_kept() -> None:
    """As some Anthropic-compatible servers send them: no deltas at all."""
    starts = [
        {"type": "thinking", "thinking": "plan it", "signature": "sig-9"},
        {"type": "text", "text": "On it."},
        {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "a.py"}},
    ]
    body = [
        event({"type": "message_start", "message": {"usage": {"input_tokens": 3}}}),
        *(
            event({"type": "content_block_start", "index": i, "content_block": block})
            for i, block in enumerate(starts)
        ),
        event({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}}),
        event({"type": "message_stop"}),
    ]
    async with WireServer([sse(body)]) as server:
        _, message = await collect(anthropic(server.url), ASK)
    assert message.content == (
        ReasoningBlock(text="plan it", signature="sig-9"),
        TextBlock(text="On it."),
        ToolCall(id="t1", name="read", arguments='{"path": "a.py"}'),
    )


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "content_block_delta", "index": 0},
        {"type": "message_delta", "delta": None},
        [1],
        {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use"}},
    ],
)
async def test_an_anthropic_event_of_the_wrong_shape_is_malformed(bad: Any) -> None:
    body = [*by_event(ANTHROPIC_TEXT)[:2], data(bad), *by_event(ANTHROPIC_TEXT)[2:]]
    async with WireServer([sse(body)]) as server:
        err = await fails(anthropic(server.url))
    assert err.code == "MALFORMED_RESPONSE"


# -- Anthropic requests ----------------------------------------------------------------------


def anthropic_model(**settings: Any) -> AnthropicModel:
    config = ModelConfig(provider="anthropic", model="c", base_url="http://x/v1", **settings)
    return AnthropicModel("claude", config, env={})


def test_anthropic_body_request_cap_wins_and_options_win_over_everything() -> None:
    model = anthropic_model(max_output_tokens=100)
    assert model.request_body(ASK.model_copy(update={"max_tokens": 20}))["max_tokens"] == 20
    body = model.request_body(ASK)
    assert set(body) == {"model", "max_tokens", "messages", "stream"}  # no empty tools
    options = {"max_tokens": 7, "model": "other", "stream": False}
    body = model.request_body(ASK.model_copy(update={"options": options}))
    assert {k: body[k] for k in options} == options
    tools = (ToolSpec(name="noop"),)
    body = model.request_body(ASK.model_copy(update={"tools": tools}))
    assert body["tools"] == [{"name": "noop", "input_schema": {"type": "object"}}]


def test_anthropic_history_skips_what_has_nothing_to_send() -> None:
    history = (
        UserMessage(content="first"),
        AssistantMessage(content=(ReasoningBlock(text="unsigned, from elsewhere"),)),
        UserMessage(content=""),
        UserMessage(content="second"),
        AssistantMessage(content=(ToolCall(id="t", name="n", arguments="[1, 2]"),)),
    )
    body = anthropic_model().request_body(ModelRequest(messages=history))
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "n", "input": {}}],
        },
    ]


# -- the connection after the final event ----------------------------------------------------


@pytest.mark.parametrize("adapter", [openai, anthropic])
async def test_a_server_slow_to_end_the_response_still_gets_the_connection_reused(
    adapter: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the drain's wait, far above the server's 50 ms: a busy machine can lose the
    # default's margin, and what is checked is that the drain reads to the end
    monkeypatch.setattr("dsh.llm._http._DRAIN_WAIT", 5.0)
    body = by_event(ANTHROPIC_TEXT if adapter is anthropic else TEXT)
    slow = sse([*body[:1], b"".join(body[1:])], pause=0.05)  # ends 50 ms after the end
    async with WireServer([slow, slow]) as server:
        async with adapter(server.url) as model:
            await collect(model, ASK, keep_open=True)
            await collect(model, ASK, keep_open=True)
        assert server.connections == 1


@pytest.mark.parametrize("then", ["stall", "drop"])
@pytest.mark.parametrize("adapter", [openai, anthropic])
async def test_what_a_server_does_after_the_final_event_does_not_matter(
    adapter: Any, then: str
) -> None:
    body = ANTHROPIC_TEXT if adapter is anthropic else TEXT
    async with WireServer([sse(body, then=then)]) as server:
        # a stalled server is left after a short wait (_DRAIN_WAIT); the bound stays
        # below the test server's STALL_LIMIT, so a drain that never ends still fails
        with anyio.fail_after(8):
            _, message = await collect(adapter(server.url), ASK)
    assert message.stop_reason in ("stop", "max_tokens")
