"""Every call of the summariser model a compaction makes is counted, once: in its
``compact/summary`` (``calls``, ``usage``, ``model``) when it logs one, a fallback's
too, else in its ``compact/end``.

Before: only the answers of the summary that was logged counted; a refused answer, a
request the summariser's server refused as too long (then asked again for the window
it stated), and the calls of a compaction that failed were left out, so a reader of
the log undercounted what compaction cost."""

from __future__ import annotations

import pytest
from compaction_util import (
    OVERFLOW,
    StatingSummariser,
    compacted_by_hand,
    events_of,
    reads,
    second_turn,
)

pytestmark = pytest.mark.plugins("compaction")

#: what each scripted answer reports
ANSWER = {"input_tokens": 10, "output_tokens": 1}


def tokens(usage: dict[str, int], answers: int) -> None:
    assert (usage["input_tokens"], usage["output_tokens"]) == (10 * answers, answers)


async def test_a_retry_for_the_summarisers_stated_window_counts_the_refused_request() -> None:
    server = StatingSummariser(100_000, refuse_over=2000, states=2000)
    result, events = await compacted_by_hand(server.model, "one " * 2000, "two", "three")

    assert result.outcome == "summarized"
    (summary,) = events_of(events, "compact/summary")
    assert summary.data["calls"] == len(server.requests) > 2  # the refused one among them
    tokens(summary.data["usage"], len(server.requests) - 1)  # the refused one reported none
    assert summary.data["model"] == "summarizer"


async def test_a_fallbacks_summary_counts_the_refused_answer() -> None:
    events, _ = await second_turn([OVERFLOW, "fits now"], "noted")

    (summary,) = events_of(events, "compact/summary")
    assert summary.data["source"] == "fallback"
    assert (summary.data["model"], summary.data["calls"]) == ("summarizer", 1)
    tokens(summary.data["usage"], 1)
    (end,) = [e for e in events_of(events) if e.type == "compact/end"]
    assert "calls" not in end.data  # counted once


async def test_a_failed_compaction_counts_its_calls_in_its_end() -> None:
    """A refusal under the window: no ``compact/summary`` to carry them."""
    events, _ = await second_turn(reads(5), "noted")

    assert "compact/summary" not in [e.type for e in events]
    (end,) = [e for e in events_of(events) if e.type == "compact/end"]
    assert end.data["outcome"] == "failed"
    assert (end.data["model"], end.data["calls"]) == ("summarizer", 1)
    tokens(end.data["usage"], 1)


async def test_a_summary_counts_its_calls_in_its_summary_only() -> None:
    server = StatingSummariser(100_000)
    result, events = await compacted_by_hand(server.model, "one " * 200, "two", "three")

    assert result.outcome == "summarized"
    (summary,) = events_of(events, "compact/summary")
    assert summary.data["calls"] == 1
    tokens(summary.data["usage"], 1)
    (end,) = [e for e in events_of(events) if e.type == "compact/end"]
    assert not {"model", "calls", "usage"} & set(end.data)
