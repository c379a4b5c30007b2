"""The turn's first step, kept for its reasoning (a model that thinks once per turn:
``turn_opening``), comes out of the tail budget as a message ``compaction_keep`` marks
does, counts among the messages kept verbatim (warned past half the room), and its
bulky tool results are pruned like the older region's: otherwise a large first step
kept beside a full tail left the compacted history at the limit, and the summariser
was called at nearly every step."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from compaction_util import OUTPUT, Dump, events_of, harness, options, reads, summarizer

from dsh.llm.base import ReasoningDelta
from dsh.testing import Reply, ScriptedModel, check_invariants, run_turn, tool_calls
from dsh_compaction import SUMMARY_HEADER

pytestmark = pytest.mark.plugins("compaction")

WINDOW = 20_000  # CharCounter: a token per character; the limit is 16,000
ANSWERS = [f"## Goal\nsummary {i}: dumped the file, read f0.py .. fN.py" for i in range(60)]
STEP = len(OUTPUT) + 40  # a read step's unit: its call and result


def first_step(size: int, *, think: bool) -> Reply:
    """The turn's first step: (``think``) signed reasoning, then a dump of ``size``."""
    dump = tool_calls(("dump", {"size": size}))
    if not think:
        return dump
    return Reply((ReasoningDelta("Plan: dump, then read.", signature="SIG"), *dump.chunks))


async def run(size: int, steps: int, *, think: bool, **settings: Any) -> tuple[list[Any], int]:
    """A turn: the first step, ``steps`` reads; its events and the summariser's calls."""
    s = summarizer(*ANSWERS)
    model = ScriptedModel([first_step(size, think=think), *reads(steps)], context_window=WINDOW)
    async with harness(model, s, extra=[("dump", Dump())]) as h:
        agent = await h.agents.create("a", options=options(**settings))
        events = await run_turn(agent, "task")
        assert check_invariants(agent.session.events) == []
    assert events[-1].data["reason"] == "completed"
    return events, len(s.requests)


async def test_a_first_step_kept_for_its_reasoning_comes_out_of_the_tail_budget() -> None:
    events, _ = await run(5_000, 25, think=True, tail_tokens=6_000)
    summaries = events_of(events, "compact/summary")
    ends = [e for e in events_of(events, "compact/end") if e.data["outcome"] == "summarized"]
    assert summaries and len(ends) == len(summaries)
    for summary in summaries:
        assert summary.data["kept"]  # the task and the first step
    for summary, end in zip(summaries, ends, strict=True):
        kept_and_tail = end.data["tokens_after"] - len(SUMMARY_HEADER + summary.data["summary"])
        assert kept_and_tail <= 6_000 + STEP


async def test_a_bulky_first_step_kept_for_its_reasoning_is_pruned() -> None:
    _, plain_calls = await run(10_000, 30, think=False, prune_chars=2_000)
    thinking, thinking_calls = await run(10_000, 30, think=True, prune_chars=2_000)
    assert plain_calls <= 2
    assert thinking_calls == plain_calls
    pruned = [p["call_id"] for e in events_of(thinking, "compact/prune") for p in e.data["pruned"]]
    dump = next(e for e in thinking if e.type == "tool/call" and e.data["name"] == "dump")
    assert dump.data["id"] in pruned


async def test_a_first_step_kept_past_half_the_room_is_warned(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="dsh_compaction"):
        await run(9_000, 8, think=True)
    warned = [r.getMessage() for r in caplog.records if "kept verbatim" in r.getMessage()]
    assert len(warned) == 1
    assert "first step" in warned[0]


async def test_a_first_step_kept_that_cannot_get_under_the_limit_is_not_summarised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # the first step (15,500) and the task reach the limit (16,000) with the last step:
    # no summary brings the request under it, so summarising at every step (a call
    # each) only lost history; it is warned once and left to the overflow path
    with caplog.at_level(logging.WARNING, logger="dsh_compaction"):
        events, calls = await run(15_500, 12, think=True, prune_chars=0)
    assert calls == 0
    assert not events_of(events, "compact/summary")
    warned = [r.getMessage() for r in caplog.records if "cannot get under" in r.getMessage()]
    assert len(warned) == 1
    assert "first step" in warned[0]
