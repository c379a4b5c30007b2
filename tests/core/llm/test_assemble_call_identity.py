"""A tool call's id and name come once (docs/models.md): a piece at the call's index
that brings an id or a name other than the one the call already has is
MALFORMED_RESPONSE, naming the index and both values. Before, the Assembler kept the
last one, so a plugin model's mistake ran a call whose id or name had silently changed
(its result named an id the call never had, or another tool ran). The same value
again, or one given after the call began without it (or with an empty one), stays
fine."""

from __future__ import annotations

import pytest

from dsh.errors import ModelError
from dsh.llm import Assembler, Finish, ToolCallDelta


def assembled(*chunks: ToolCallDelta) -> Assembler:
    assembler = Assembler()
    for chunk in chunks:
        assembler.add(chunk)
    assembler.add(Finish("tool_calls"))
    return assembler


@pytest.mark.parametrize(
    ("later", "words"),
    [
        (
            ToolCallDelta(0, id="call_b"),
            "id 'call_b' for the call at index 0, whose id is 'call_a'",
        ),
        (
            ToolCallDelta(0, name="write"),
            "name 'write' for the call at index 0, whose name is 'read'",
        ),
        (
            ToolCallDelta(0, id="call_b", name="read", arguments="}"),
            "id 'call_b' for the call at index 0, whose id is 'call_a'",
        ),
    ],
    ids=["id", "name", "id-with-the-same-name"],
)
def test_another_id_or_name_for_a_started_call_is_malformed(
    later: ToolCallDelta, words: str
) -> None:
    assembler = Assembler()
    assembler.add(ToolCallDelta(0, id="call_a", name="read", arguments="{"))
    with pytest.raises(ModelError) as caught:
        assembler.add(later)
    assert caught.value.code == "MALFORMED_RESPONSE"
    assert caught.value.message == f"the model streamed another {words}"


def test_the_same_id_and_name_again_are_one_call() -> None:
    message = assembled(
        ToolCallDelta(0, id="call_a", name="read", arguments='{"path"'),
        ToolCallDelta(0, id="call_a", name="read", arguments=': "a"}'),
        ToolCallDelta(1, id="call_b", name="read", arguments="{}"),
    ).message()
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        ("call_a", "read", '{"path": "a"}'),
        ("call_b", "read", "{}"),
    ]


def test_an_id_or_name_given_after_the_call_began_is_taken() -> None:
    message = assembled(
        ToolCallDelta(0, name="read", arguments="{"),
        ToolCallDelta(0, id="late", arguments="}"),
        ToolCallDelta(1, id="call_b", arguments="{}"),
        ToolCallDelta(1, name="write"),
        ToolCallDelta(2, id="", name="", arguments="{}"),  # empty: none yet
        ToolCallDelta(2, id="call_c", name="read"),
    ).message()
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        ("late", "read", "{}"),
        ("call_b", "write", "{}"),
        ("call_c", "read", "{}"),
    ]


def test_an_empty_id_or_name_after_the_first_keeps_it() -> None:
    """A model that gives the id and name in a call's first piece and an empty one in
    the next (``""``, as some OpenAI-compatible servers send, which a plugin model may
    pass on as it came) says nothing new: the call keeps its first id and name."""
    message = assembled(
        ToolCallDelta(0, id="call_a", name="read", arguments='{"path"'),
        ToolCallDelta(0, id="", name="", arguments=': "a"}'),
        ToolCallDelta(0, id=None, name=None),
    ).message()
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        ("call_a", "read", '{"path": "a"}'),
    ]
