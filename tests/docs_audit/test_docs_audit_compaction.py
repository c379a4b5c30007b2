"""docs/compaction.md and docs/hooks.md on the overflow retry and `max_request_retries`."""

from __future__ import annotations

import pytest

pytest.importorskip("dsh_compaction")

from compaction_util import events_of, harness, reads, summarizer

from dsh.testing import ScriptedModel, fail, run_turn

pytestmark = pytest.mark.plugins("compaction")

OVERFLOW = fail("CONTEXT_WINDOW_EXCEEDED", "prompt is too long")


@pytest.mark.parametrize("retries", [0, 1])
async def test_the_overflow_retry_needs_max_request_retries_of_at_least_1(retries: int) -> None:
    """compaction.md:53-55: "The retry needs the agent option `max_request_retries` to be
    at least 1 (the default): at 0 the loop asks no plugin, and the overflow ends the
    turn"; hooks.md:311: "With `max_request_retries: 0` the hook never fires"."""
    model = ScriptedModel([*reads(5), OVERFLOW, "fits now"][: 7 if retries == 0 else 8])
    summariser = summarizer("what happened so far")
    options = {"model": "scripted", "compaction": {"model": "summarizer", "prune_chars": 0}}
    if retries == 0:
        options["max_request_retries"] = 0
    async with harness(model, summariser) as h:
        agent = await h.agents.create("a", options=options)
        await run_turn(agent, "task")
        events = await run_turn(agent, "next")
    end = events[-1]
    if retries == 0:
        assert events_of(events) == [] and not any(e.type == "step/retry" for e in events)
        assert end.data["reason"] == "error"
        assert end.data["error"]["code"] == "CONTEXT_WINDOW_EXCEEDED"
    else:
        assert [e.data["reason"] for e in events_of(events, "compact/start")] == ["overflow"]
        assert end.data["reason"] == "completed"
    model.assert_complete()
