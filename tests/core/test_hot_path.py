"""The loop's hot-path shortcuts keep the promises of the slow path they replace.

- ``trusted`` builds the same model as validation would (pydantic internals it relies
  on are checked here, so a pydantic upgrade that changes them fails loudly);
- the assembler type-checks every chunk, which is what lets chunk events skip the
  lossless-JSON walk and the message skip validation;
- core agent options are checked once, when the agent is built;
- sessions call the ``session_event`` hook only while some plugin implements it.
"""

from __future__ import annotations

import json
import warnings
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from dsh import create_plugin_manager, hookimpl
from dsh._ready import READY
from dsh.errors import DshError, ModelError
from dsh.harness import Harness
from dsh.llm import Finish, ReasoningDelta, TextDelta, ToolCallDelta, UsageChunk
from dsh.llm.assemble import Assembler
from dsh.messages import (
    AssistantMessage,
    ModelRequest,
    ProviderBlock,
    ReasoningBlock,
    TextBlock,
    ToolCall,
    ToolResult,
    ToolResultMessage,
    Usage,
    UserMessage,
    trusted,
)
from dsh.session import Session, SessionEvent
from dsh.testing import EventRecorder, Reply, ScriptedModel, run_turn, scripted_harness, text
from dsh.tools import ArgumentsError, ToolRegistry, read_arguments, tool

USAGE = Usage(input_tokens=3, output_tokens=2)
CALL = ToolCall(id="c1", name="add", arguments='{"a": 1}')

VALUES: list[tuple[type[BaseModel], dict[str, Any]]] = [
    (
        Usage,
        {"input_tokens": 1, "output_tokens": 2, "cache_read_tokens": 3, "cache_write_tokens": 4},
    ),
    (TextBlock, {"type": "text", "text": "hi"}),
    (ReasoningBlock, {"type": "reasoning", "text": "hm", "signature": "sig", "redacted": None}),
    (ToolCall, {"type": "tool_call", "id": "c1", "name": "add", "arguments": "{}"}),
    (ToolResult, {"call_id": "c1", "content": "3", "is_error": False}),
    (UserMessage, {"role": "user", "content": "hi"}),
    (
        ToolResultMessage,
        {"role": "tool", "call_id": "c1", "name": "add", "content": "3", "is_error": False},
    ),
    (
        AssistantMessage,
        {
            "role": "assistant",
            "content": (TextBlock(text="x"), CALL),
            "stop_reason": "tool_calls",
            "usage": USAGE,
            "model": "m",
        },
    ),
    (
        ModelRequest,
        {
            "model": "m",
            "system": "be brief",
            "messages": (UserMessage(content="hi"),),
            "tools": (),
            "max_tokens": 10,
            "options": {},
        },
    ),
]


@pytest.mark.parametrize(("cls", "values"), VALUES, ids=[c.__name__ for c, _ in VALUES])
def test_trusted_builds_what_validation_builds(
    cls: type[BaseModel], values: dict[str, Any]
) -> None:
    assert list(values) == list(cls.model_fields), "trusted() needs every field, in order"
    assert cls.__new__ is object.__new__, "trusted() creates the instance with object.__new__"
    fast = trusted(cls, dict(values))
    slow = cls.model_validate(values)
    assert fast == slow
    assert fast.model_dump(mode="json") == slow.model_dump(mode="json")
    assert fast.model_dump_json() == slow.model_dump_json()
    assert repr(fast) == repr(slow)
    assert fast.model_copy(update={}) == slow
    with pytest.raises(Exception, match="frozen"):
        setattr(fast, next(iter(values)), None)


class _Block(TextBlock):
    """A plugin's own block type: to_data must hand it to pydantic."""


MESSAGES = {
    "text and call": AssistantMessage(content=(TextBlock(text="x"), CALL), usage=USAGE, model="m"),
    "reasoning": AssistantMessage(
        content=(ReasoningBlock(text="hm"), ReasoningBlock(text="s", signature="sig"))
    ),
    "provider block": AssistantMessage(
        content=(ProviderBlock(provider="p", data={"type": "x", "n": [1, 2.5, None]}), CALL)
    ),
    "empty": AssistantMessage(),
    "subclassed block": AssistantMessage(content=(_Block(text="mine"),)),
    "unchecked copy": AssistantMessage().model_copy(update={"model": 5}),
    "unchecked block": AssistantMessage(content=(TextBlock.model_construct(text=7),)),
}


@pytest.mark.parametrize("message", MESSAGES.values(), ids=list(MESSAGES))
def test_to_data_is_model_dump(message: AssistantMessage) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns about the unchecked values
        assert message.to_data() == message.model_dump(mode="json")
    assert USAGE.to_data() == USAGE.model_dump()


def test_usage_sums_are_validated_models() -> None:
    total = USAGE + Usage(input_tokens=1, cache_read_tokens=5)
    assert total == Usage(input_tokens=4, output_tokens=2, cache_read_tokens=5)


def test_an_emitted_event_has_every_field_its_constructor_sets() -> None:
    # Session.emit builds its events without calling SessionEvent.__init__; the live
    # value reaches the reducer (the history holds that object), then the event drops it
    session = Session("s")
    session.emit("turn/start", {"turn": 1}, checked=True)
    message = AssistantMessage(content=(TextBlock(text="hi"),), usage=USAGE, model="m")
    session.emit("assistant/message", {"message": message.to_data()}, message, checked=True)
    for event in session.events:
        built = SessionEvent(event.type, event.seq, event.time, event.data, None)
        assert {slot: getattr(event, slot) for slot in SessionEvent.__slots__} == {
            slot: getattr(built, slot) for slot in SessionEvent.__slots__
        }
    assert [e.seq for e in session.events] == [0, 1]
    assert session.history[-1] is message


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


class _Observer:
    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl
    def session_event(self, event: Any) -> None:
        self.seen.append(event.type)


async def test_sessions_call_session_event_only_while_a_plugin_implements_it() -> None:
    async with scripted_harness(
        ScriptedModel([text("one"), text("two"), text("three")]), load_entry_points=False
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        assert agent.session.observer is None
        await run_turn(agent, "one")
        observer = _Observer()
        harness.pm.register(observer, "late-observer")
        assert agent.session.observer is not None
        await run_turn(agent, "two")
        assert observer.seen[0] == "turn/start" and observer.seen[-1] == "turn/end"
        seen = len(observer.seen)
        harness.pm.unregister(observer)
        assert agent.session.observer is None
        await run_turn(agent, "three")
        assert len(observer.seen) == seen


class _Shapes:
    """session_event impls taking each shape of arguments; one raises."""

    def __init__(self) -> None:
        self.got: list[tuple[str, object]] = []

    @hookimpl
    def session_event(self, event: Any, session: Any) -> None:
        self.got.append(("event, session", (event.type, session.id)))


class _OnlySession:
    def __init__(self, got: list[tuple[str, object]]) -> None:
        self.got = got

    @hookimpl
    def session_event(self, session: Any) -> None:
        self.got.append(("session", session.id))


class _Nothing:
    def __init__(self, got: list[tuple[str, object]]) -> None:
        self.got = got

    @hookimpl
    def session_event(self) -> None:
        self.got.append(("nothing", None))
        raise RuntimeError("observer down")


async def test_sync_observers_are_called_directly_with_the_arguments_they_name() -> None:
    shapes = _Shapes()
    errors: list[Any] = []
    async with scripted_harness(ScriptedModel([text("hi")]), load_entry_points=False) as harness:
        harness.pm.dispatcher.report = errors.append
        for name, plugin in (
            ("shapes", shapes),
            ("only-session", _OnlySession(shapes.got)),
            ("nothing", _Nothing(shapes.got)),
        ):
            harness.pm.register(plugin, name)
        session = harness.sessions.prepare("s")
        harness.sessions.enter(session)
        assert session.observer != harness.relay.observe_event  # direct calls, no dispatch
        assert session.emit("note", {}) is READY

    # LIFO: the last registered runs first; a raising observer stops nobody
    assert shapes.got == [("nothing", None), ("session", "s"), ("event, session", ("note", "s"))]
    assert [(e.plugin, e.hook) for e in errors] == [("nothing", "session_event")]


async def test_a_recorder_registered_before_start_sees_every_event() -> None:
    recorder = EventRecorder()
    async with scripted_harness(
        ScriptedModel([text("hi")]), plugins=[("rec", recorder)], load_entry_points=False
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "hi")
        assert [e.seq for _, e in recorder.events] == list(range(len(agent.session.events)))


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


def test_copies_of_trusted_models_do_not_share_what_they_change() -> None:
    first = trusted(TextBlock, {"type": "text", "text": "a"})
    second = trusted(TextBlock, {"type": "text", "text": "b"})
    changed = first.model_copy(update={"text": "c"})
    assert (first.text, second.text, changed.text) == ("a", "b", "c")
    assert first.model_fields_set == {"type", "text"}
    assert changed.model_fields_set == {"type", "text"}
    assert changed.model_fields_set is not first.model_fields_set


def test_a_stored_log_with_wrong_types_is_refused_naming_the_field() -> None:
    events = [
        SessionEvent("turn/start", 0, 0.0, {"turn": 1}),
        SessionEvent("user/message", 1, 0.0, {"content": 5}),
    ]
    with pytest.raises(ValidationError, match="content"):
        Session("s", events)
    events[1] = SessionEvent(
        "tool/result", 1, 0.0, {"call_id": "c", "name": "add", "content": "3", "is_error": "maybe"}
    )
    with pytest.raises(ValidationError, match="is_error"):
        Session("s", events)


async def test_a_stopped_harness_stops_following_registrations() -> None:
    pm = create_plugin_manager(load_entry_points=False)
    for _ in range(3):
        async with Harness(pm=pm):
            assert len(pm.dispatcher.listeners) == 1
    assert pm.dispatcher.listeners == []


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
