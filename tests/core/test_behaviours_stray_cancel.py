"""Conformance: a stray cancellation (an ``asyncio.CancelledError`` that no abort,
cancel or disposal of the turn caused, ``dsh._stray``) is the failure of whatever raised
it: a tool's is an error result (18), a model stream's ends the turn ``error`` (13), an
interception hook's ends the turn naming the plugin (34), an observer's is reported
(37); and whatever fails in an agent's loop task is reported, never cancelling the
harness, its other agents or the host code in ``async with harness``.

Each test names the numbered behaviour of shared/design/BEHAVIOURS.md it checks. The
cancellations are raised, not caused, so they are stray on asyncio and on trio alike.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import anyio
import pytest
from behaviours_durability_support import ok
from loop_support import LIMIT, ends

from dsh import DshError, hookimpl
from dsh.session import SessionEvent
from dsh.testing import (
    ErrorRecorder,
    ScriptedModel,
    check_invariants,
    hang,
    run_turn,
    scripted_harness,
    text,
    tool_calls,
)
from dsh.tools import tool


@tool
async def stray() -> str:
    "Awaits what someone else cancelled."
    raise asyncio.CancelledError


class Tools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(stray)


def cancelled_elsewhere(request: Any) -> str:
    raise asyncio.CancelledError


class StrayInRequest:
    @hookimpl
    async def agent_request(self, agent: Any, turn: int) -> None:
        if agent.id == "a" and turn == 1:
            raise asyncio.CancelledError


class StrayObserver:
    @hookimpl
    async def session_event(self, event: SessionEvent) -> None:
        if event.type == "assistant/message":
            raise asyncio.CancelledError


async def both_agents(model: ScriptedModel, *plugins: tuple[str, object]) -> list[str]:
    """Runs a turn of agent ``a`` on ``model`` while agent ``b`` is mid-turn, in a
    harness with ``plugins``; then a second turn of ``a``. What went wrong, if anything
    (the host's code cancelled, ``b``'s turn aborted)."""
    wrong: list[str] = []
    other = ScriptedModel([hang("b is streaming")], name="other")
    async with scripted_harness(model, other, plugins=[("tools", Tools()), *plugins]) as harness:
        a = await harness.agents.create("a", options={"model": "scripted"})
        b = await harness.agents.create("b", options={"model": "other"})
        b.send("wait")
        with anyio.fail_after(LIMIT):
            first = await run_turn(a, "go")
            second = await run_turn(a, "again")
            await anyio.lowlevel.checkpoint()  # cancelled here if the task group is
        if b.status != "running":
            wrong.append(f"b is {b.status}")
        if ends(first)[0][1] not in ("completed", "error") or ends(second) != [(2, "completed")]:
            wrong.append(f"a's turns ended {ends(first) + ends(second)}")
        if check_invariants(a.session.events):
            wrong.append("a's log breaks the invariants")
        b.cancel()
    return wrong


async def test_b18_a_tool_raising_a_stray_cancellation_gives_an_error_result() -> None:
    model = ScriptedModel([tool_calls(("stray", {})), text("read it"), text("two")])
    async with scripted_harness(model, plugins=[("tools", Tools())]) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            first = await run_turn(agent, "go")
            second = await run_turn(agent, "again")

    (result,) = [e.data for e in first if e.type == "tool/result"]
    assert result["is_error"] is True
    assert "tool 'stray' failed: CancelledError" in result["content"]
    assert "no abort" in result["content"]
    assert ends(first) == [(1, "completed")]  # the model read the error and answered
    assert ends(second) == [(2, "completed")]
    assert len(model.requests) == 3


async def test_b13_a_stream_raising_a_stray_cancellation_ends_the_turn_error() -> None:
    model = ScriptedModel([cancelled_elsewhere, text("two")])
    async with scripted_harness(model) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            first = await run_turn(agent, "go")
            second = await run_turn(agent, "again")

    (end,) = [e.data for e in first if e.type == "turn/end"]
    assert end["reason"] == "error"
    assert end["error"]["code"] == "UNKNOWN"
    assert "model 'scripted' failed: CancelledError" in end["error"]["message"]
    assert ends(second) == [(2, "completed")]


async def test_b34_a_hook_raising_a_stray_cancellation_ends_only_its_turn() -> None:
    model = ScriptedModel([ok, ok])
    async with scripted_harness(model, plugins=[("flaky", StrayInRequest())]) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            first = await run_turn(agent, "one")
            second = await run_turn(agent, "two")

    (end,) = [e.data for e in first if e.type == "turn/end"]
    assert (end["reason"], end["error"]["plugin"], end["error"]["hook"]) == (
        "error",
        "flaky",
        "agent_request",
    )
    # was "...: CancelledError: ", nothing after it: now what it is, as a tool's says
    said = end["error"]["message"]
    assert "failed in hook agent_request" in said
    assert said.endswith(
        "CancelledError (a cancellation that no abort, cancel or disposal "
        "of the turn caused: something it awaited was cancelled)"
    )
    assert ends(second) == [(2, "completed")]


async def test_b37_an_observer_raising_a_stray_cancellation_is_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    errors = ErrorRecorder()
    model = ScriptedModel([text("one"), text("two")])
    plugins = [("stray", StrayObserver()), ("errors", errors)]
    assert await both_agents(model, *plugins) == []
    failed = [(f.plugin, f.hook) for f in errors.failures]  # a's two answers, b's cut one
    assert failed == [("stray", "session_event")] * 3
    reports = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert any("'stray'" in m and "session_event" in m and "no abort" in m for m in reports)


@pytest.mark.parametrize(
    ("script", "plugins"),
    [
        ([tool_calls(("stray", {})), text("one"), text("two")], []),
        ([cancelled_elsewhere, text("two")], []),
        ([ok, ok], [("flaky", StrayInRequest())]),
        ([text("one"), text("two")], [("stray", StrayObserver())]),
    ],
    ids=["tool", "stream", "hook", "observer"],
)
async def test_b34_a_stray_cancellation_cancels_no_other_agent_nor_the_host(
    script: list[Any], plugins: list[tuple[str, object]]
) -> None:
    assert await both_agents(ScriptedModel(script), *plugins) == []


async def test_b34_a_failure_in_the_loop_task_is_reported_and_the_agent_serves_on(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from dsh._steps import StepRunner

    run_turn_of = StepRunner.run_turn
    calls = 0

    async def broken_once(self: StepRunner, *args: Any) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:  # a bug of the loop's own, outside the turn's containment
            raise asyncio.CancelledError
        await run_turn_of(self, *args)

    monkeypatch.setattr(StepRunner, "run_turn", broken_once)
    errors = ErrorRecorder()
    model = ScriptedModel([text("two")])
    async with scripted_harness(model, plugins=[("errors", errors)]) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        agent.send("one")
        with anyio.fail_after(LIMIT):
            await agent.when_idle()
            assert agent.status == "idle"
            second = await run_turn(agent, "two")
            await anyio.lowlevel.checkpoint()  # cancelled here if the task group is

    assert [type(e).__name__ for e in errors.errors] == ["CancelledError"]
    assert ends(second) == [(2, "completed")]
    assert any(
        r.levelno >= logging.ERROR and "'a'" in r.getMessage() and "loop failed" in r.getMessage()
        for r in caplog.records
    )


async def test_b34_a_prompt_awaiting_a_turn_the_loop_task_failed_in_returns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The failed turn was numbered but never counted as ended: ``prompt()`` waited
    for ever though the loop served on."""
    from dsh._steps import StepRunner

    async def broken(self: StepRunner, *args: Any) -> None:
        raise RuntimeError("a bug of the loop's own")

    monkeypatch.setattr(StepRunner, "run_turn", broken)
    async with scripted_harness(ScriptedModel([]), plugins=[("errors", ErrorRecorder())]) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT), pytest.raises(DshError) as failed:
            await agent.prompt("one")
        assert str(failed.value) == "agent 'a': turn 1 failed in the agent loop"
        with anyio.fail_after(LIMIT):
            await agent.when_idle()  # and it serves on


async def test_b34_a_loop_task_failing_again_and_again_is_disposed_not_spinning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A failure that came back with nothing awaited between spun the loop task for
    ever, the event loop never running another task (the host hung)."""
    from dsh.loop import FAILURES_IN_A_ROW, ReactLoopAgent

    async def broken(self: ReactLoopAgent) -> None:
        raise RuntimeError("parking failed")

    monkeypatch.setattr(ReactLoopAgent, "_park", broken)
    errors = ErrorRecorder()
    async with scripted_harness(ScriptedModel([]), plugins=[("errors", errors)]) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            # the host runs (the loop task yields); no event says "disposed" here
            while agent.status != "disposed":  # noqa: ASYNC110
                await anyio.sleep(0.01)
    assert len(errors.errors) == FAILURES_IN_A_ROW
    assert any("it stops: the agent is disposed" in r.getMessage() for r in caplog.records)


@tool
async def grouped() -> str:
    "Raises a group holding a stray cancellation."
    raise BaseExceptionGroup("g", [asyncio.CancelledError(), ValueError("boom")])


class GroupTools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(grouped)


async def test_b18_a_group_holding_a_stray_cancellation_is_the_tool_s_failure() -> None:
    model = ScriptedModel([tool_calls(("grouped", {})), text("done")])
    async with scripted_harness(model, plugins=[("tools", GroupTools())]) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "go")
            await anyio.lowlevel.checkpoint()  # cancelled here if the task group is
    [result] = [e.data for e in events if e.type == "tool/result"]
    assert result["is_error"] and "BaseExceptionGroup" in result["content"], result
    assert ends(events) == [(1, "completed")]
    assert check_invariants(agent.session.events) == []
