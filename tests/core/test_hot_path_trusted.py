"""The loop's hot-path shortcuts keep the promises of the slow path they replace:
``trusted`` builds the same model as validation would (pydantic internals it relies on
are checked here, so a pydantic upgrade that changes them fails loudly), and a stored
log with wrong types is still refused.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from hot_path_support import CALL, USAGE
from pydantic import BaseModel, ValidationError

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
    # Session._record builds its events without calling SessionEvent.__init__; the live
    # value reaches the reducer (the history holds that object), then the event drops it
    session = Session("s")
    session._record("turn/start", {"turn": 1})
    message = AssistantMessage(content=(TextBlock(text="hi"),), usage=USAGE, model="m")
    session._record("assistant/message", {"message": message.to_data()}, message)
    for event in session.events:
        built = SessionEvent(event.type, event.seq, event.time, event.data, None)
        assert {slot: getattr(event, slot) for slot in SessionEvent.__slots__} == {
            slot: getattr(built, slot) for slot in SessionEvent.__slots__
        }
    assert [e.seq for e in session.events] == [0, 1]
    assert session.history[-1] is message


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
