"""Loop behaviours that hand mutation testing found unpinned by the other tests.

Each test names the behaviour of shared/design/BEHAVIOURS.md it belongs to, where one
applies, and the change to the loop that it catches.
"""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from loop_support import LIMIT, agent_on, contents, ends, types

from dsh import ContinuationDecision, UserMessage, hookimpl
from dsh._wakeup import FutureEvent
from dsh.agent import AgentHandle
from dsh.loop import AgentDisposedError, ReactLoopAgent
from dsh.session import CORE_REDUCERS, Session, SessionEvent
from dsh.testing import (
    ScriptedModel,
    check_invariants,
    run_turn,
    scripted_harness,
    text,
    tool_calls,
)

# -- 1: status notifications and when_idle ------------------------------------------------


class SlowStatus:
    """An async ``agent_status`` impl that yields a few times before it records."""

    def __init__(self) -> None:
        self.statuses: list[str] = []

    @hookimpl
    async def agent_status(self, status: str) -> None:
        for _ in range(3):
            await anyio.lowlevel.checkpoint()
        self.statuses.append(status)


async def test_b01_when_idle_resolves_only_after_the_idle_notification_finished() -> None:
    """Catches ``_park`` waking ``when_idle`` before it notifies ``idle``."""
    slow = SlowStatus()
    model = ScriptedModel([text("hello")])
    async with agent_on(model, ("slow", slow)) as (_, agent):
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "hi")

        assert slow.statuses == ["running", "idle"]


async def test_b01_a_status_hook_sees_the_agent_already_in_that_status() -> None:
    """Catches ``_set_status`` notifying before it sets ``status``."""
    seen: list[tuple[str, str]] = []

    class Check:
        @hookimpl
        def agent_status(self, agent: Any, status: str) -> None:
            seen.append((status, agent.status))

    model = ScriptedModel([text("hello")])
    async with agent_on(model, ("check", Check())) as (_, agent):
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "hi")
            await agent.dispose()

    assert seen == [("running", "running"), ("idle", "idle"), ("disposed", "disposed")]


async def test_b03_a_prompt_sent_by_the_idle_notification_runs() -> None:
    """Catches ``_park`` replacing its wake-up event before waiting on it: a send made
    while ``idle`` is being notified would be lost and the agent would hang."""
    handle: list[AgentHandle] = []

    class FollowUp:
        sent = False

        @hookimpl
        def agent_status(self, status: str) -> None:
            if status == "idle" and not self.sent:
                self.sent = True
                handle[0].send("follow-up")

    model = ScriptedModel([text("one"), text("two")])
    async with agent_on(model, ("follow-up", FollowUp())) as (_, agent):
        handle.append(agent)
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "first")

        assert ends(events) == [(1, "completed"), (2, "completed")]
        assert contents(events, "user/message") == ["first", "follow-up"]


# -- 6: late steering ----------------------------------------------------------------------


async def test_b06_several_late_steers_become_the_next_turn_in_their_order() -> None:
    """Catches ``requeue_steering`` putting leftover steering back in another order."""
    handle: list[AgentHandle] = []

    class SteerTwiceAtTheEnd:
        @hookimpl
        def agent_turn_continuation(self, turn: int) -> None:
            if turn == 1:
                handle[0].steer("a")
                handle[0].steer("b")

    model = ScriptedModel([text("one"), text("two")])
    async with agent_on(model, ("steer", SteerTwiceAtTheEnd())) as (_, agent):
        handle.append(agent)
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "first")

        assert contents(events, "user/message") == ["first", "a", "b"]
        assert ends(events) == [(1, "completed"), (2, "completed")]
        assert model.requests[1].messages[-2:] == [
            UserMessage(content="a"),
            UserMessage(content="b"),
        ]
        assert "steering/message" not in types(events)


# -- 7: a loop that is gone takes no prompts -----------------------------------------------


async def test_b07_a_loop_ended_by_an_outer_cancellation_takes_no_more_prompts() -> None:
    """Catches ``_check_alive`` looking only at ``begin_stop``: a loop task cancelled
    from outside is ``disposed`` too, and a prompt sent to it would be silently lost."""
    async with agent_on(ScriptedModel()) as (harness, _):
        agent = ReactLoopAgent(
            "outer",
            harness.sessions.prepare("outer-session"),
            relay=harness.relay,
            models=harness.models,
            tools=harness.tools,
            options={"model": "scripted"},
        )
        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(agent.run)
                await anyio.wait_all_tasks_blocked()
                tg.cancel_scope.cancel()

        assert agent.status == "disposed"
        with pytest.raises(AgentDisposedError):
            agent.send("lost")
        with pytest.raises(AgentDisposedError):
            agent.steer("lost")
        assert agent.inbox.queued == []


# -- 24: a reason only goes with continue --------------------------------------------------


async def test_b24_a_stop_with_a_reason_logs_no_steering() -> None:
    """Catches the continuation reason being logged whatever the action."""

    class Budget:
        @hookimpl
        def agent_turn_continuation(self) -> ContinuationDecision:
            return ContinuationDecision(action="stop", reason="budget spent")

    model = ScriptedModel([tool_calls(("add", {"a": 1, "b": 2})), text("two")])
    async with agent_on(model, ("budget", Budget())) as (_, agent):
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "add")
            await run_turn(agent, "again")

        assert "steering/message" not in types(agent.session.events)
        assert ends(events) == [(1, "completed")]
        assert UserMessage(content="budget spent") not in model.requests[1].messages


# -- 30: an abort that lands without a checkpoint ------------------------------------------


async def test_b30_an_abort_from_a_sync_continuation_hook_starts_no_further_step() -> None:
    """Catches the step loop not re-checking for an abort between steps: an abort from
    a sync hook meets no checkpoint, so only that check stops the next step."""
    handle: list[AgentHandle] = []

    class AbortAfterTheTools:
        @hookimpl
        def agent_turn_continuation(self, step: int) -> None:
            if step == 1:
                handle[0].abort()  # the default stays "continue": the step had calls

    model = ScriptedModel([tool_calls(("add", {"a": 1, "b": 2})), text("never asked")])
    async with agent_on(model, ("abort", AbortAfterTheTools())) as (_, agent):
        handle.append(agent)
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "add")

        assert ends(events) == [(1, "aborted")]
        assert types(events).count("step/start") == 1
        assert len(model.requests) == 1
        assert contents(events, "tool/result") == ["3"]
        assert check_invariants(agent.session.events) == []


# -- 42: a reducer may replace the history ------------------------------------------------


async def test_b42_a_reducer_returning_a_new_list_replaces_history_live_and_on_replay() -> None:
    """Catches ``emit`` or ``_fold`` (the replay path) ignoring a reducer's new list."""

    def summarise(history: list[Any], event: SessionEvent) -> list[Any]:
        return [UserMessage(content=event.data["summary"])]

    reducers = {**CORE_REDUCERS, "notes/summary": summarise}
    live = Session("s", reducers=reducers)
    await live._record("user/message", {"content": "one"})
    before = live.history
    await live._record("user/message", {"content": "two"})
    await live.emit("notes/summary", {"summary": "one, two"})
    await live._record("user/message", {"content": "three"})

    expected = [UserMessage(content="one, two"), UserMessage(content="three")]
    assert list(live.history) == expected
    assert list(before) == [UserMessage(content="one")]  # an earlier view is a snapshot
    replayed = Session("s", live.events, reducers=reducers)
    assert list(replayed.history) == expected


# -- agents.create -------------------------------------------------------------------------


async def test_create_does_not_change_the_callers_meta() -> None:
    """Catches ``create`` storing the options into the caller's own meta dict."""
    meta = {"team": "docs"}
    async with scripted_harness(ScriptedModel(), load_entry_points=False) as h:
        agent = await h.agents.create("a", meta=meta, options={"model": "scripted"})
        assert agent.session.meta == {
            "team": "docs",
            "agent": "a",
            "options": {"model": "scripted"},
        }
    assert meta == {"team": "docs"}


# -- the wake-up event ---------------------------------------------------------------------


@pytest.mark.asyncio_only("FutureEvent and asyncio tasks")
async def test_set_right_after_a_waiter_was_cancelled_still_wakes_the_others() -> None:
    """Catches ``FutureEvent.set`` resolving a waiter's future that a cancellation has
    already cancelled (its task has not yet run to remove it): that raises
    InvalidStateError in whoever sets the event, e.g. the agent's loop task."""
    event = FutureEvent()
    woken: list[str] = []

    async def waiter(name: str) -> None:
        await event.wait()
        woken.append(name)

    with anyio.fail_after(LIMIT):
        stays = asyncio.ensure_future(waiter("stays"))
        cancelled = asyncio.ensure_future(waiter("cancelled"))
        await asyncio.sleep(0)
        assert len(event._waiters) == 2
        cancelled.cancel()  # its future is cancelled now; the task has not resumed yet
        event.set()
        await stays
        with pytest.raises(asyncio.CancelledError):
            await cancelled

    assert woken == ["stays"]
    assert event._waiters == []
