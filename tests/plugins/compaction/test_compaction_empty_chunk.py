"""An empty answer of the summariser model for one chunk of a region summarised in
chunks is an empty summary (``EMPTY_SUMMARY``), as for a region summarised at once: a
first chunk's empty answer was taken, and the next chunk's answer stood for the whole
region; a later one's was refused as ``SUMMARY_TOO_SHORT``, as was an empty merge of a
previous summary."""

from __future__ import annotations

import pytest
from compaction_util import (
    OVERFLOW,
    PREVIOUS,
    WINDOW,
    events_of,
    harness,
    options,
    reads,
    second_turn,
    summary_of,
)

from dsh.testing import ScriptedModel, check_invariants, run_turn

pytestmark = pytest.mark.plugins("compaction")

#: a summary of a chunk (the checks pass it: long enough, no copy, no echo)
GOOD = "## Goal\n" + "The fact of chunk {0} is 42; keep it. " * 10


def script(empty: int) -> list[str]:
    """The summariser's answers: the ``empty``-th (from 0) is empty, the others good."""
    return ["" if i == empty else GOOD.format(i) for i in range(20)]


@pytest.mark.parametrize("empty", [0, 1], ids=["first-chunk", "middle-chunk"])
async def test_an_empty_answer_for_one_chunk_fails_the_summary_as_empty(empty: int) -> None:
    small = ScriptedModel(script(empty), name="summarizer", context_window=8192)
    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, small) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")
        assert check_invariants(agent.session.events) == []

    end = events_of(events)[-1]
    assert (end.data["outcome"], end.data["error"]["code"]) == ("failed", "EMPTY_SUMMARY")
    said = end.data["error"]["message"]
    assert said.startswith("the summariser (model 'summarizer') wrote nothing")
    assert len(small.requests) == empty + 1  # no call after the empty answer
    assert "compact/summary" not in [e.type for e in events]
    assert events[-1].data["reason"] == "completed"


async def test_an_overflows_empty_later_answer_keeps_the_summary_of_the_parts_before() -> None:
    """The request must shrink: the refusal falls back as any other, keeping the
    summary of the chunks before the empty answer (``EMPTY_SUMMARY`` in its note)."""
    small = ScriptedModel(script(1), name="summarizer", context_window=8192)
    model = ScriptedModel([*reads(3, then=OVERFLOW), "fits"], context_window=WINDOW)
    async with harness(model, small) as h:
        agent = await h.agents.create("a", options=options())
        events = await run_turn(agent, "task")
        assert check_invariants(agent.session.events) == []

    summary, end = [e for e in events_of(events) if e.type != "compact/start"]
    assert (summary.data["source"], end.data["outcome"]) == ("fallback", "dropped")
    assert end.data["refused"]["code"] == "EMPTY_SUMMARY"
    assert summary.data["summary"].startswith(GOOD.format(0).strip() + "\n\n[")
    assert "summarised above only in part" in summary.data["summary"]
    assert "(EMPTY_SUMMARY).]" in summary.data["summary"]
    assert len(small.requests) == 2
    assert events[-1].data["reason"] == "completed"


async def test_an_empty_merge_of_a_previous_summary_is_empty_not_too_short() -> None:
    events, history = await second_turn(reads(5), "")

    end = events_of(events)[-1]
    assert (end.data["outcome"], end.data["error"]["code"]) == ("failed", "EMPTY_SUMMARY")
    assert end.data["error"]["message"] == "the summariser (model 'summarizer') wrote nothing"
    assert history[0] == summary_of(PREVIOUS)
