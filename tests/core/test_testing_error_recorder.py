"""``dsh.testing.ErrorRecorder.failures``: the hook failures a plugin manager reports
(an observer or notification impl that raised, a tools_execute impl failing closed),
which otherwise reach only the log, so a test of a plugin whose ``session_event`` raises
on every event no longer passes without a word (docs/testing.md)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from dsh import HookError, hookimpl
from dsh.plugins import PluginManager
from dsh.testing import ErrorRecorder, ScriptedModel, run_turn, scripted_harness


class Raising:
    @hookimpl
    def session_event(self, event: Any) -> None:
        raise ValueError(f"boom on {event.type}")


async def test_a_scripted_harness_records_each_observer_failure_and_still_logs_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    errors = ErrorRecorder()
    plugins = [("raising", Raising()), errors]
    with caplog.at_level(logging.ERROR):
        async with scripted_harness(ScriptedModel(["ok"]), plugins=plugins) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            events = await run_turn(agent, "hi")
    assert events[-1].data["reason"] == "completed"  # an observer's failure ends no turn
    assert errors.failures  # one per event seen
    assert all(isinstance(f, HookError) for f in errors.failures)
    assert {(f.plugin, f.hook) for f in errors.failures} == {("raising", "session_event")}
    assert "boom on turn/end" in str(errors.failures[-1])
    assert len(caplog.records) == len(errors.failures)  # still logged, as before
    assert errors.errors == []  # agent_error: not a failure outside the turn's log


async def test_a_recorder_on_a_given_manager_is_watched_once(dsh_pm: PluginManager) -> None:
    errors = ErrorRecorder()
    dsh_pm.register(errors, "errors")
    errors.watch(dsh_pm)  # by hand as well: still one record per failure
    async with scripted_harness(ScriptedModel(["ok"]), plugins=[Raising()], pm=dsh_pm) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "hi")
    turn_ends = [f for f in errors.failures if "boom on turn/end" in str(f)]
    assert len(turn_ends) == 1


async def test_dsh_register_makes_a_recorder_watch_dsh_pm(
    dsh_pm: PluginManager, dsh_register: Any
) -> None:
    class Stopping:
        @hookimpl
        def harness_stopping(self, harness: Any) -> None:
            raise RuntimeError("cannot stop")

    errors = ErrorRecorder()
    dsh_register(errors)
    dsh_register(Stopping(), "stopping")
    await dsh_pm.relay.harness_stopping(None)  # type: ignore[arg-type]
    assert [(f.plugin, f.hook) for f in errors.failures] == [("stopping", "harness_stopping")]
