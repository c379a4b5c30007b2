"""A compacted session resumed with compaction off (``-p no:compaction``) gets its whole
history back (no reducer folds ``compact/*`` now): a warning says so once, naming the
plugin, the context window and the switch that turned it off. Resumed with compaction
on, nothing is said (behaviour 46 derives the compacted history).

Was: silent; the next request could be far over the window and nothing told why."""

from __future__ import annotations

import logging

import pytest
from compaction_util import WINDOW, BulkyTool, events_of, harness, options, reads, summarizer

from dsh.plugins import create_plugin_manager
from dsh.testing import InMemoryPersistence, ScriptedModel, run_turn, scripted_harness

pytestmark = pytest.mark.plugins("compaction")


def _warned(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "dsh._unapplied"]


async def test_a_compacted_session_resumed_with_compaction_off_warns_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = InMemoryPersistence()
    model = ScriptedModel([*reads(5)], context_window=WINDOW)
    async with harness(model, summarizer("summary one"), extra=[("mem", store)]) as h:
        agent = await h.agents.create("a", options=options())
        compacted = events_of(await run_turn(agent, "task"), "compact/summary")
        live = len(agent.session.history)
        session_id = agent.session.id
    assert compacted

    with caplog.at_level(logging.WARNING):
        async with harness(model, extra=[("mem", store)]) as h:
            await (await h.agents.resume("a", session_id, options=options())).dispose()
    assert _warned(caplog) == []

    caplog.clear()
    pm = create_plugin_manager(load_entry_points=False)
    pm.set_blocked("compaction")  # as -p no:compaction does
    plugins = [("bulky", BulkyTool()), ("mem", store)]
    with caplog.at_level(logging.WARNING):
        async with scripted_harness(ScriptedModel([]), plugins=plugins, pm=pm) as h:
            resumed = await h.agents.resume("a", session_id, options={"model": "scripted"})
            whole = len(resumed.session.history)
            await resumed.dispose()
    assert whole > live  # the whole history, as the log holds it
    (said,) = _warned(caplog)
    assert f"session {session_id} holds 1 compact/summary event" in said
    assert "plugin 'compaction' (dsh-compaction), which is not loaded" in said
    assert "context window" in said
    assert "-p no:compaction" in said
