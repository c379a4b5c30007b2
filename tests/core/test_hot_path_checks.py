"""The loop's hot-path shortcuts keep the promises of the slow path they replace: the
assembler type-checks every chunk (which lets chunk events skip the lossless-JSON walk
and the message skip validation), core agent options are checked once when the agent
is built, and tool arguments and results are checked in one pass.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hot_path_support import CALL, USAGE
from pydantic import ValidationError

from dsh.errors import DshError, ModelError
from dsh.llm import Finish, ReasoningDelta, TextDelta, ToolCallDelta, UsageChunk
from dsh.llm.assemble import Assembler
from dsh.messages import (
    AssistantMessage,
    ToolCall,
)
from dsh.testing import Reply, ScriptedModel, run_turn, scripted_harness, text
from dsh.tools import ArgumentsError, ToolRegistry, read_arguments, tool


def test_the_assembled_message_equals_a_validated_one() -> None:
    assembler = Assembler()
    for chunk in (
        ReasoningDelta("thinking", signature="s"),
        TextDelta("a"),
        TextDelta("b"),
        ToolCallDelta(0, id="c1", name="add"),
        ToolCallDelta(0, arguments='{"a": 1}'),
        UsageChunk(USAGE),
        Finish("tool_calls"),
    ):
        assembler.add(chunk)
    message = assembler.message(model="m")
    assert message == AssistantMessage.model_validate(message.model_dump(mode="json"))
    assert message.text == "ab"
    assert message.tool_calls == [CALL]


BAD_CHUNKS = [
    TextDelta(5),  # type: ignore[arg-type]
    TextDelta(None),  # type: ignore[arg-type]
    ReasoningDelta(b"bytes"),  # type: ignore[arg-type]
    ReasoningDelta("ok", signature=3),  # type: ignore[arg-type]
    ToolCallDelta("0", id="c", name="add"),  # type: ignore[arg-type]
    ToolCallDelta(0, id=1, name="add"),  # type: ignore[arg-type]
    ToolCallDelta(0, id="c", name=["add"]),  # type: ignore[arg-type]
    ToolCallDelta(0, arguments={"a": 1}),  # type: ignore[arg-type]
    UsageChunk({"input_tokens": 1}),  # type: ignore[arg-type]
    Finish("done"),  # type: ignore[arg-type]
    "just text",
]


@pytest.mark.parametrize("chunk", BAD_CHUNKS, ids=repr)
def test_a_chunk_with_wrong_field_types_is_a_malformed_response(chunk: Any) -> None:
    with pytest.raises(ModelError) as caught:
        Assembler().add(chunk)
    assert caught.value.code == "MALFORMED_RESPONSE"


async def test_a_model_streaming_a_bad_chunk_ends_the_turn_and_logs_only_json() -> None:
    model = ScriptedModel([Reply((TextDelta(float("nan")), Finish("stop"))), text("fine")])  # type: ignore[arg-type]
    async with scripted_harness(model, load_entry_points=False) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "hi")
        assert [e.type for e in events if e.type == "assistant/chunk"] == []
        end = events[-1]
        assert end.type == "turn/end"
        assert end.data["error"]["code"] == "MALFORMED_RESPONSE"
        for event in agent.session.events:
            event.to_json()  # every event is lossless JSON
        later = await run_turn(agent, "again")
        assert later[-1].data["reason"] == "completed"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("model", 3),
        ("system_prompt", None),
        ("max_steps", 0),
        ("max_steps", "5"),
        ("max_tokens", -1),
        ("max_request_retries", True),
        ("queue_mode", "fifo"),
        ("extra_roots", "/srv/data"),
    ],
)
async def test_bad_core_options_fail_when_the_agent_is_created(key: str, value: Any) -> None:
    async with scripted_harness(ScriptedModel([]), load_entry_points=False) as harness:
        with pytest.raises(DshError, match=f"agent 'a': option '{key}' must be"):
            await harness.agents.create("a", options={"model": "scripted", key: value})
        assert harness.agents.list() == []


@pytest.mark.parametrize(
    ("value", "content"),
    [
        ({"sum": 3, "parts": [1, 2]}, '{"sum":3,"parts":[1,2]}'),
        (3, "3"),
        (None, "null"),
        (datetime(2026, 11, 30, 12, 0, tzinfo=UTC), '"2026-11-30T12:00:00Z"'),
        ("plain text", "plain text"),
    ],
)
async def test_a_tool_result_that_is_not_text_is_sent_as_json(value: Any, content: str) -> None:
    @tool
    def give() -> Any:
        "Give the value."
        return value

    registry = ToolRegistry()
    registry.add("test", give)
    result = await registry.execute(ToolCall(id="c", name="give"))
    assert (result.content, result.is_error) == (content, False)


async def test_a_tool_result_json_cannot_encode_is_an_error_result() -> None:
    @tool
    def give() -> Any:
        "Give something opaque."
        return object()

    registry = ToolRegistry()
    registry.add("test", give)
    result = await registry.execute(ToolCall(id="c", name="give"))
    assert result.is_error
    assert result.content.startswith("tool 'give' failed: PydanticSerializationError")


@tool
def scaled(a: float = 0, b: int = 1) -> float:
    "a times b"
    return a * b


ARGUMENTS = ['{"a": 1.5, "b": 2}', '{"a": "2", "b": 3.0}', "", "  ", '{"a": NaN}']


ARGUMENTS += ['{"b": 1, "b": 4}', '{"b": "x"}', "[1]", '{"a": 1', '{"c": 1}']


@pytest.mark.parametrize("arguments", ARGUMENTS)
async def test_tool_arguments_checked_in_one_pass_as_in_two(arguments: str) -> None:
    # the registry parses and validates in one pydantic-core pass, and explains a
    # failure step by step; either way the outcome is that of json.loads + validation
    registry = ToolRegistry()
    registry.add("t", scaled)
    call = ToolCall(id="c", name="scaled", arguments=arguments)
    result = await registry.execute(call)
    try:
        raw = json.loads(arguments) if arguments.strip() else {}
        values = scaled.arguments.model_validate(raw).__dict__
    except (ValueError, ValidationError):
        assert result.is_error and "scaled" in result.content
        with pytest.raises(ArgumentsError):
            read_arguments(scaled, call)
    else:
        assert (result.is_error, result.content) == (False, json.dumps(scaled.run(**values)))
        assert repr(read_arguments(scaled, call).__dict__) == repr(values)  # NaN != NaN


@pytest.mark.parametrize(
    ("arguments", "kind"), [('{"a": 1', "json"), ("[1]", "object"), ('{"b": "x"}', "schema")]
)
def test_read_arguments_says_which_step_failed(arguments: str, kind: str) -> None:
    with pytest.raises(ArgumentsError) as caught:
        read_arguments(scaled, ToolCall(id="c", name="scaled", arguments=arguments))
    assert caught.value.kind == kind
