"""Review of the day's compaction changes (the turn's opening reasoning kept by a cut
inside a tool loop, ``turn_opening`` in ``_plan.py``), by hand mutation: each test here
failed on a mutant that the other compaction tests let through (named in its
docstring)."""

from __future__ import annotations

import pytest
from compaction_util import result

from dsh import AssistantMessage, Message, ReasoningBlock, ToolCall, UserMessage
from dsh_compaction._plan import turn_opening

pytestmark = pytest.mark.plugins("compaction")


def step(call_id: str, *, thinking: bool) -> list[Message]:
    blocks: list[ReasoningBlock | ToolCall] = []
    if thinking:
        blocks.append(ReasoningBlock(text="why", signature=f"sig-{call_id}"))
    blocks.append(ToolCall(id=call_id, name="read", arguments="{}"))
    return [
        AssistantMessage(content=tuple(blocks), stop_reason="tool_calls"),
        result(call_id),
    ]


def test_only_the_turn_s_first_assistant_message_can_be_its_opening() -> None:
    """Mutant: the search went on past a first assistant message without reasoning and
    kept a later step's (docs/compaction.md: "the turn's first assistant message is kept
    too ... if it opens with reasoning")."""
    history: list[Message] = [UserMessage(content="task")]
    history += step("a", thinking=False) + step("b", thinking=True) + step("c", thinking=False)
    assert turn_opening(history, 5) is None  # a tail from step c
    assert turn_opening(history, 3) is None  # a tail from step b: it opens with reasoning


def test_an_assistant_message_without_content_is_no_opening_and_no_crash() -> None:
    """Mutant: ``_opens_with_reasoning`` without its ``bool(message.content)`` (an
    IndexError on an assistant message with no blocks)."""
    history: list[Message] = [UserMessage(content="task"), AssistantMessage(content=())]
    history += step("b", thinking=False)
    assert turn_opening(history, 2) is None
    history[1] = AssistantMessage(content=(ReasoningBlock(text="x", signature="s"),))
    assert turn_opening(history, 2) == 1  # the same history, opening with reasoning
