"""``ErrorRecorder.failures`` holds an interception hook's failure that ended a turn
(the turn's HOOK error), as it holds those dsh reports and goes on: a plugin's test
asserting ``errors.failures == []`` does not pass while its hook raises."""

from __future__ import annotations

from typing import Any

import anyio

from dsh import hookimpl
from dsh.testing import ErrorRecorder, ScriptedModel, run_turn, scripted_harness, text, tool_calls
from dsh.tools import tool


class Broken:
    @hookimpl
    def agent_request(self) -> None:
        raise RuntimeError("the bad plugin broke")


async def test_a_hook_failure_that_ended_the_turn_is_recorded_once() -> None:
    errors = ErrorRecorder()
    model = ScriptedModel([text("ok")])
    plugins = [("bad", Broken()), errors]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(5):
            events = await run_turn(agent, "hi")
    assert events[-1].data["error"]["code"] == "HOOK"
    [failure] = errors.failures
    assert (failure.plugin, failure.hook) == ("bad", "agent_request")
    assert str(failure.cause) == "the bad plugin broke"
    assert errors.errors == []


@tool
def noop() -> str:
    """Does nothing."""
    return ""


class Tools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(noop)


class Guard:
    @hookimpl(tryfirst=True)
    def tools_execute(self) -> None:
        raise RuntimeError("the guard broke")


async def test_a_failure_dsh_reports_and_goes_on_from_is_still_recorded_once() -> None:
    errors = ErrorRecorder()
    model = ScriptedModel([tool_calls(("noop", {})), text("done")])
    plugins = [Tools(), ("guard", Guard()), errors]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(5):
            events = await run_turn(agent, "hi")
    assert events[-1].data["reason"] == "completed"
    assert [(f.plugin, f.hook) for f in errors.failures] == [("guard", "tools_execute")]
