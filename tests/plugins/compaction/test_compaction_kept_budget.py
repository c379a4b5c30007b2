"""Messages a ``compaction_keep`` plugin marks come out of the tail budget, as the
turn's task does: a large kept message (the docs' "PROJECT BRIEF") shrinks the tail
kept verbatim beside it, instead of adding to it and leaving the compacted history
close to the limit. Kept messages that take more than half the room below the limit
leave no room to grow into whatever the tail: that is warned, once."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import pytest
from compaction_util import OUTPUT, events_of, harness, options, reads, summarizer

import dsh_compaction
from dsh import hookimpl
from dsh.testing import ScriptedModel, check_invariants, run_turn
from dsh_compaction import SUMMARY_HEADER

pytestmark = pytest.mark.plugins("compaction")

ANSWERS = [f"## Goal\nsummary {i} of the reads so far, f0.py .. f19.py." for i in range(30)]


class KeepBrief:
    @hookimpl(optionalhook=True)
    def compaction_keep(self, messages: Sequence[Any], keep: frozenset[int]) -> set[int]:
        return keep | {i for i, m in enumerate(messages) if "PROJECT BRIEF" in str(m)}


async def run(brief: int, window: int, steps: int) -> tuple[list[Any], ScriptedModel, Any]:
    s = summarizer(*ANSWERS)
    model = ScriptedModel(["noted", *reads(steps)], context_window=window)
    async with harness(model, s, extra=[("brief", KeepBrief())]) as h:
        # tail_tokens 6,000 (CharCounter: a token per character; no system prompt)
        agent = await h.agents.create("a", options=options(tail_tokens=6_000))
        # the brief is an earlier turn's prompt: not the task, kept by the plugin alone
        await run_turn(agent, "PROJECT BRIEF " + "b" * brief)
        events = await run_turn(agent, "read the files")
        assert check_invariants(agent.session.events) == []
        history = agent.session.history
    assert any("PROJECT BRIEF" in str(m) for m in history)  # kept verbatim
    return events, s, model


async def test_a_kept_message_comes_out_of_the_tail_budget() -> None:
    events, _, _ = await run(5_000, 20_000, 20)
    summaries = events_of(events, "compact/summary")
    ends = [e for e in events_of(events, "compact/end") if e.data["outcome"] == "summarized"]
    assert summaries and len(ends) == len(summaries)
    step = len(OUTPUT) + 40  # the last step's unit, always kept: its call and result
    for summary, end in zip(summaries, ends, strict=True):
        kept_and_tail = end.data["tokens_after"] - len(SUMMARY_HEADER + summary.data["summary"])
        assert kept_and_tail <= 6_000 + step


async def test_kept_messages_past_half_the_room_are_warned_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="dsh_compaction"):
        events, _, _ = await run(3_000, 7_000, 10)
    assert len(events_of(events, "compact/end")) > 1
    warned = [r.getMessage() for r in caplog.records if "compaction_keep" in r.getMessage()]
    assert len(warned) == 1
    assert "agent 'a'" in warned[0] and "~3,028 tokens" in warned[0]  # the brief and the task


async def test_a_manual_compaction_of_mostly_kept_messages_warns_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """/compact plans for the history's size, not the limit: kept messages taking most
    of it say nothing of the room below the limit."""
    model = ScriptedModel(["noted", *reads(3)], context_window=100_000)
    async with harness(model, summarizer("## Goal\nread f0.py .. f2.py"), extra=[KeepBrief()]) as h:
        agent = await h.agents.create("a", options=options())
        await run_turn(agent, "PROJECT BRIEF " + "b" * 9_000)
        await run_turn(agent, "read the files")
        with caplog.at_level(logging.WARNING, logger="dsh_compaction"):
            result = await dsh_compaction.compact_now(agent)
    assert result.outcome == "summarized"
    assert not [r for r in caplog.records if "compaction_keep" in r.getMessage()]
