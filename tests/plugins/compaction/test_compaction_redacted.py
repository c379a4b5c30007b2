"""Anthropic's redacted reasoning (a ``ReasoningBlock`` with opaque ``redacted`` data and
no text) in compaction: counted as no text, left out of the summary's transcript."""

from __future__ import annotations

import pytest

from dsh import AssistantMessage, ReasoningBlock, TextBlock, ToolCall, UserMessage
from dsh_compaction import HeuristicCounter, TextTokenCounter
from dsh_compaction._transcript import transcript

pytestmark = pytest.mark.plugins("compaction")

OPAQUE = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw=="


def test_a_redacted_block_is_counted_and_transcribed_without_its_data() -> None:
    message = AssistantMessage(
        content=(
            ReasoningBlock(text="plan", signature="s"),
            ReasoningBlock(text="", redacted=OPAQUE),
            TextBlock(text="ok"),
            ToolCall(id="c", name="read"),
        ),
        stop_reason="tool_calls",
    )
    counter = TextTokenCounter(len, message_overhead=0, call_overhead=0)
    assert counter.count_message(message) == len("plan") + len("ok") + len("read") + len("{}")
    assert HeuristicCounter().count_message(message) > 0
    (_, entry) = transcript([UserMessage(content="go"), message])
    assert OPAQUE not in entry
    assert entry.count("[assistant, thinking]") == 1
