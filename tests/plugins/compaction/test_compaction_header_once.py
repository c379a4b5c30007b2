"""A summary whose text already opens with ``SUMMARY_HEADER`` (a summariser that
copied it from the summary it merged, a plugin that returned a whole summary message)
opens the history with the header once, not twice."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from compaction_util import BY_HAND, by_hand, compacted_by_hand, harness, summarizer

from dsh import Message, hookimpl
from dsh.testing import ScriptedModel
from dsh_compaction import SUMMARY_HEADER

pytestmark = pytest.mark.plugins("compaction")

TEXT = "## Goal\nThe fact is 42."


async def test_a_summariser_answer_with_the_header_gets_it_once() -> None:
    result, events = await compacted_by_hand(
        summarizer(SUMMARY_HEADER + TEXT), "one " * 200, "two " * 200
    )
    assert result.outcome == "summarized"
    logged = [e for e in events if e.type == "compact/summary"][-1]
    assert logged.data["summary"] == TEXT
    assert result.summary == TEXT


class HeaderedSummary:
    @hookimpl(optionalhook=True)
    def compaction_summarize(
        self, agent: Any, messages: Sequence[Message], previous_summary: str | None
    ) -> str:
        return SUMMARY_HEADER + TEXT


async def test_a_plugin_summary_with_the_header_gets_it_once() -> None:
    model = ScriptedModel(["ok", "ok"], context_window=100_000)
    async with harness(model, extra=[("headered", HeaderedSummary())], chars=False) as h:
        agent = await h.agents.create("a", options=BY_HAND)
        result = await by_hand(agent, "one " * 200, "two " * 200)
        history = list(agent.session.history)
    assert result.outcome == "summarized"
    assert history[0].content == SUMMARY_HEADER + TEXT
