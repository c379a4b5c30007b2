"""The chunk classes set their slots in an ``__init__`` of their own (it is on every
turn's path); they must stay what the frozen dataclasses were: keyword or positional
arguments with the same defaults, frozen, equal by value, hashable, replaceable."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from dsh.llm import Finish, ReasoningDelta, TextDelta, ToolCallDelta, UsageChunk
from dsh.messages import Usage

CHUNKS = [
    (TextDelta("hi"), TextDelta(text="hi")),
    (ReasoningDelta("r", "sig"), ReasoningDelta(text="r", signature="sig", redacted=None)),
    (ToolCallDelta(0, "id", "add"), ToolCallDelta(index=0, id="id", name="add", arguments="")),
    (UsageChunk(Usage(input_tokens=1)), UsageChunk(usage=Usage(input_tokens=1))),
    (Finish("stop"), Finish(reason="stop")),
]


@pytest.mark.parametrize(("positional", "keywords"), CHUNKS)
def test_a_chunk_is_a_frozen_value(positional: object, keywords: object) -> None:
    assert positional == keywords and hash(positional) == hash(keywords)
    assert pickle.loads(pickle.dumps(positional)) == positional
    field = dataclasses.fields(positional)[0].name  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(positional, field, None)
    assert not hasattr(positional, "__dict__")


def test_defaults_and_replace_are_the_dataclass_ones() -> None:
    assert ToolCallDelta(1) == ToolCallDelta(1, None, None, "")
    assert ReasoningDelta("x").signature is None and ReasoningDelta("x").redacted is None
    changed = dataclasses.replace(ToolCallDelta(0, id="a"), arguments="{}")
    assert changed == ToolCallDelta(0, "a", None, "{}")
    assert repr(changed) == "ToolCallDelta(index=0, id='a', name=None, arguments='{}')"
    assert ToolCallDelta(0) != ToolCallDelta(1)
    with pytest.raises(TypeError):
        TextDelta()  # type: ignore[call-arg]
