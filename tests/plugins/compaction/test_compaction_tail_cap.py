"""A ``tail_tokens`` setting is capped at half the room below the limit, as the default
tail is: a tail as large as the room left nothing to summarise, so every threshold
check planned nothing and an overflow ended the turn CONTEXT_WINDOW_EXCEEDED."""

from __future__ import annotations

from typing import Any

import pytest
from compaction_util import (
    WINDOW,
    WindowServer,
    events_of,
    harness,
    options,
    reads,
    summarizer,
)

from dsh.testing import ScriptedModel, run_turn, tool_calls

pytestmark = pytest.mark.plugins("compaction")


async def test_b44_a_tail_tokens_larger_than_the_room_is_capped_at_half_of_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("WARNING", logger="dsh_compaction")
    model = ScriptedModel([*reads(7), "again"], context_window=WINDOW)
    async with harness(model, summarizer("summary 1", "summary 2")) as h:
        agent = await h.agents.create("a", options=options(tail_tokens=20_000))
        events = await run_turn(agent, "task")
        events += await run_turn(agent, "more")

    ends = events_of(events, "compact/end")
    assert ends and ends[0].data["outcome"] == "summarized"
    # the limit is 0.8 * 7000 = 5600 (CharCounter: nothing but the history counts), the
    # tail at most half of it; the summary message is small
    assert ends[0].data["tokens_after"] <= 5600 / 2 + 400
    warnings = [r.getMessage() for r in caplog.records if "tail_tokens" in r.getMessage()]
    assert len(warnings) == 1  # once per agent, however many compactions
    assert "agent 'a'" in warnings[0] and "20000" in warnings[0]


async def test_b44_a_tail_tokens_below_half_the_room_is_kept_as_set(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("WARNING", logger="dsh_compaction")
    model = ScriptedModel(reads(5), context_window=WINDOW)
    async with harness(model, summarizer("summary")) as h:
        agent = await h.agents.create("a", options=options(tail_tokens=1300))
        events = await run_turn(agent, "task")

    # a 1300-token tail keeps the latest step (its call and 1232-token result) only
    end = events_of(events, "compact/end")[0]
    assert end.data["tokens_after"] < 1300 + 400
    assert not [r for r in caplog.records if "tail_tokens" in r.getMessage()]


async def test_b44_an_overflow_with_a_too_large_tail_tokens_still_compacts() -> None:
    # a window the threshold does not know (the model info lacks it):
    # only the overflow path runs, and the tail_tokens is larger than the window
    steps: list[Any] = [tool_calls(("read", {"path": f"f{i}.py"})) for i in range(20)]
    server = WindowServer(4_000, [*steps, "done"], max_output=0)
    server.model.context_window = None
    compaction = {"tail_tokens": 20_000, "prune_chars": 0}
    async with harness(server.model, chars=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted", "compaction": compaction})
        events = await run_turn(agent, "task")

    ends = events_of(events, "compact/end")
    assert ends and ends[0].data["reason"] == "overflow"
    assert ends[0].data["outcome"] == "summarized"
    assert events[-1].data["reason"] == "completed"


async def test_the_tail_tokens_warning_names_the_room_and_what_takes_the_rest_of_the_limit(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A system prompt of 3,000 tokens leaves 2,600 of the 5,600 limit to the history: the
    warning says so, not only that tail_tokens is too large."""
    caplog.set_level("WARNING", logger="dsh_compaction")
    model = ScriptedModel(reads(4), context_window=WINDOW)
    agent_options = {**options(tail_tokens=20_000), "system_prompt": "s" * 3000}
    async with harness(model, summarizer("summary 1", "summary 2")) as h:
        agent = await h.agents.create("a", options=agent_options)
        events = await run_turn(agent, "task")

    outcomes = [e.data["outcome"] for e in events_of(events, "compact/end")]
    assert outcomes == ["summarized", "summarized"]
    assert [r.getMessage() for r in caplog.records] == [
        "agent 'a': tail_tokens (20000) is more than half the room below the compaction "
        "limit (~2,600 tokens: the limit 5,600 less ~3,000 for the system prompt, the tools "
        "and the messages plugins add); the tail kept verbatim is capped at ~1,300 tokens"
    ]
