"""Helpers of the compaction tests found by mutation testing (test_compaction_m_*.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compaction_util import CharCounter

from dsh import AssistantMessage, Message, TextBlock, ToolCall, ToolResultMessage
from dsh.testing import fail
from dsh_compaction._plan import plan_compaction

CHARS = CharCounter()
WINDOW = 7000  # CharCounter: a read step adds 1232 tokens; step 6 of reads(5) passes 0.8
OVERFLOW = fail("CONTEXT_WINDOW_EXCEEDED", "prompt is too long")


def options(**compaction: Any) -> dict[str, Any]:
    settings = {"model": "summarizer", "prune_chars": 0, **compaction}
    return {"model": "scripted", "compaction": settings}


def call(call_id: str) -> AssistantMessage:
    tool_call = ToolCall(id=call_id, name="read", arguments="{}")
    return AssistantMessage(content=(tool_call,), stop_reason="tool_calls")


def result(call_id: str, content: str = "r") -> ToolResultMessage:
    return ToolResultMessage(call_id=call_id, name="read", content=content)


def answer(text: str) -> AssistantMessage:
    return AssistantMessage(content=(TextBlock(text=text),))


def plan(messages: Sequence[Message], budget: int, keep: Sequence[int] = (), prune: int = 0) -> Any:
    counts = [CHARS.count_message(m) for m in messages]
    return plan_compaction(
        messages, counts, tail_budget=budget, keep=keep, prune_chars=prune, counter=CHARS
    )
