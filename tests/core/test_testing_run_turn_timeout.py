"""``run_turn(agent, prompt, timeout=...)`` bounds a turn (from a third-party plugin
author's review: a test whose model ``hang()``s, or whose plugin never lets the turn
end, waited forever). A turn still running when the time is up is aborted, then
``TimeoutError`` is raised; the agent is idle again, so the harness closes."""

from __future__ import annotations

import pytest

from dsh.testing import ScriptedModel, check_invariants, hang, run_turn, scripted_harness


async def test_a_turn_that_does_not_end_in_time_is_aborted_and_raises() -> None:
    model = ScriptedModel([hang("partial"), "later"])
    async with scripted_harness(model, load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with pytest.raises(TimeoutError) as late:
            await run_turn(agent, "hi", timeout=0.05)
        assert str(late.value) == "run_turn: the turn did not end within 0.05 s; it was aborted"
        events = agent.session.events
        assert events[-1].type == "turn/end" and events[-1].data["reason"] == "aborted"
        assert model.aborted == 1
        again = await run_turn(agent, "again", timeout=60)  # the agent serves on
        assert again[-1].data["reason"] == "completed"
        assert check_invariants(agent.session.events) == []
    model.assert_complete()


async def test_without_a_timeout_run_turn_waits_for_the_turn() -> None:
    model = ScriptedModel(["ok"])
    async with scripted_harness(model, load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "hi", timeout=None)
    assert events[-1].data["reason"] == "completed"
