"""Errors a server sends as an SSE *event* mid-stream (``event: error``, an ``error:``
field, or both with data lines), served byte for byte by the loopback wire server.

Before: the parser ignored the event's name, so ``event: error`` whose data was not
already ``{"error": ...}`` was read as an ordinary chunk: MALFORMED_RESPONSE (Anthropic:
no ``type``; plain text), or, from the OpenAI-compatible adapter, no error at all (the
cut answer passed as complete); an ``error:`` field beside data lines was pasted before
them and the two failed as one unreadable chunk. Now each ends the stream with the
server's own error: its message, and a code from its type or status.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_wire import WireServer, collect, sse, unserved
from test_secrets_study_errors import KEY, anthropic, openai, shows

from dsh.errors import ModelError
from dsh.harness import Harness
from dsh.llm._sse import SSEParser
from dsh.messages import ModelRequest, UserMessage
from dsh.testing import check_invariants, run_turn

ASK = ModelRequest(messages=(UserMessage(content="hi"),))
DONE = b"data: [DONE]\n\n"
ANTHROPIC_START = (
    b"event: message_start\n"
    b'data: {"type":"message_start","message":{"usage":{"input_tokens":3}}}\n\n'
    b"event: content_block_start\n"
    b'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'
    b"\n\n"
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Su"}}'
    b"\n\n"
)
OPENAI_START = b'data: {"choices":[{"index":0,"delta":{"content":"par"}}]}\n\n'


def parse(stream: bytes) -> list[Any]:
    parser = SSEParser()
    return [json.loads(data) for data in parser.feed(stream) + parser.end()]


async def failure(model: Any, body: list[bytes]) -> ModelError:
    async with WireServer([sse(body)]) as server:
        with pytest.raises(ModelError) as caught:
            await collect(model(server.url), ASK)
        assert len(server.requests) == 1  # streamed already: never replayed
    return caught.value


# -- the parser --------------------------------------------------------------------------------


def test_an_error_event_whose_data_is_already_an_error_object_is_passed_as_it_is() -> None:
    anthropic_shape = {"type": "error", "error": {"type": "overloaded_error", "message": "O"}}
    stream = b"event: error\ndata: " + json.dumps(anthropic_shape).encode() + b"\n\n"
    assert parse(stream) == [anthropic_shape]


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b'{"message": "boom", "code": 400}', {"message": "boom", "code": 400}),
        (b'{"error": null, "message": "boom"}', {"error": None, "message": "boom"}),
        (b"upstream timeout", "upstream timeout"),
        (b"{not json", "{not json"),
        (b"", "an error event without a message"),
    ],
)
def test_an_error_event_wraps_its_data_as_the_error(data: bytes, error: Any) -> None:
    assert parse(b"event: error\ndata: " + data + b"\n\n") == [{"error": error}]


def test_an_error_field_beside_data_lines_is_one_error_not_two_glued_lines() -> None:
    field = b'error: {"message": "from the field"}\n'
    assert parse(field + b'data: {"choices": []}\n\n') == [{"error": {"message": "from the field"}}]
    # data that is an error object already is the fuller of the two
    both = field + b'data: {"error": {"message": "from the data", "code": 503}}\n\n'
    assert parse(both) == [{"error": {"message": "from the data", "code": 503}}]


def test_only_the_event_s_own_name_counts_and_it_ends_with_the_event() -> None:
    stream = (
        b"event: error\nevent: message\ndata: {}\n\n"  # the last name is the event's
        b"event: error\n\n"  # no data: not dispatched, as the standard says
        b"data: {}\n\n"  # the next event is not an error
    )
    assert parse(stream) == [{}, {}]


# -- the adapters ------------------------------------------------------------------------------

OPENAI_CASES = {
    # vLLM / OpenAI error object as the data of a named event, no "error" member
    "event-error-object": (
        b'event: error\ndata: {"object": "error", "message": "boom", "type": "BadRequestError",'
        b' "code": 400}\n\n',
        "INVALID_REQUEST",
        "BadRequestError: boom",
    ),
    "event-error-text": (b"event: error\ndata: upstream timeout\n\n", "SERVER", "upstream timeout"),
    "event-error-anthropic-shape": (
        b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error",'
        b' "message": "Overloaded"}}\n\n',
        "SERVER",
        "overloaded_error: Overloaded",
    ),
    "error-field-and-data": (
        b'error: {"code": 503, "message": "slot busy"}\n'
        b'data: {"error": {"code": 503, "message": "slot busy"}}\n\n',
        "SERVER",
        "slot busy",
    ),
    "error-field-rate-limit-and-data": (
        b'error: {"message": "slow down", "type": "rate_limit_error"}\ndata: {"choices": []}\n\n',
        "RATE_LIMIT",
        "rate_limit_error: slow down",
    ),
}


@pytest.mark.parametrize("case", list(OPENAI_CASES))
async def test_openai_compatible_error_events_end_with_the_servers_error(case: str) -> None:
    event, code, words = OPENAI_CASES[case]
    err = await failure(openai, [OPENAI_START, event, DONE])
    assert (err.code, unserved(err.message)) == (
        code,
        f"model 'wire': error in the stream: {words}",
    )


ANTHROPIC_CASES = {
    "standard": (
        b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error",'
        b'"message":"Overloaded"}}\n\n',
        "SERVER",
        "overloaded_error: Overloaded",
    ),
    "no-type": (
        b'event: error\ndata: {"error":{"type":"rate_limit_error","message":"Too many"}}\n\n',
        "RATE_LIMIT",
        "rate_limit_error: Too many",
    ),
    "message-only": (b'event: error\ndata: {"message":"Overloaded"}\n\n', "SERVER", "Overloaded"),
    "text": (b"event: error\ndata: Internal server error\n\n", "SERVER", "Internal server error"),
    "openai-shape-without-event": (
        b'data: {"error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
        "SERVER",
        "overloaded_error: Overloaded",
    ),
}


@pytest.mark.parametrize("case", list(ANTHROPIC_CASES))
async def test_anthropic_error_events_end_with_the_servers_error(case: str) -> None:
    event, code, words = ANTHROPIC_CASES[case]
    err = await failure(anthropic, [ANTHROPIC_START, event])
    assert (err.code, unserved(err.message)) == (
        code,
        f"model 'wire': error in the stream: {words}",
    )


@pytest.mark.parametrize("adapter", [openai, anthropic])
async def test_a_key_quoted_in_an_error_event_is_hidden(adapter: Any) -> None:
    start = OPENAI_START if adapter is openai else ANTHROPIC_START
    event = f"event: error\ndata: invalid key {KEY} for this model\n\n".encode()
    err = await failure(adapter, [start, event])
    assert err.code == "SERVER"
    assert not shows(err.message)
    assert "invalid key" in err.message and "for this model" in err.message


# -- a whole turn ------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
async def test_a_turn_ends_with_the_error_event_s_code_and_message(provider: str) -> None:
    start = OPENAI_START if provider == "openai-compatible" else ANTHROPIC_START
    event = b'event: error\ndata: {"message": "Overloaded", "type": "overloaded_error"}\n\n'
    config = (
        f"models:\n  wire:\n    provider: {provider}\n    model: m\n    base_url: URL\n"
        "    api_key_env: DSH_WIRE_KEY\nagents:\n  - id: main\n    model: wire\n"
    )
    async with WireServer([sse([start, event, DONE])]) as server:
        harness = Harness(
            config_text=config.replace("URL", server.url),
            load_entry_points=False,
            env={"DSH_WIRE_KEY": "sk-wire-turn"},
        )
        async with harness as h:
            agent = h.agents.get("main")
            assert agent is not None
            events = await run_turn(agent, "hi")
            check_invariants(agent.session.events)
    end = events[-1]
    assert (end.type, end.data["reason"]) == ("turn/end", "error")
    assert end.data["error"]["code"] == "SERVER"
    assert "error in the stream: overloaded_error: Overloaded" in unserved(
        end.data["error"]["message"]
    )
