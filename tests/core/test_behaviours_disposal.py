"""Conformance: behaviours 31-33 (disposal mid-turn, concurrent dispose calls, live session
ids), with ``when_idle()`` around disposal.

Each test names the numbered behaviour of shared/design/BEHAVIOURS.md it checks. The
loop is driven with a scripted model; tests wait on session events, status
notifications or ``when_idle()``, always under ``anyio.fail_after``. Entry-point plugins
may be installed (the nox matrix), so event type lists are filtered to the core's types.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest
from behaviours_control_support import HANG, HungRequest, Lifecycle, SlowStart
from loop_support import LIMIT, Seen, agent_on, ends, types

from dsh import DshError, hookimpl
from dsh.agent import AgentHandle
from dsh.loop import AgentDisposedError
from dsh.session import SessionEvent
from dsh.testing import (
    InMemoryPersistence,
    ScriptedModel,
    check_invariants,
    hang,
    run_turn,
    text,
)

# -- 31: disposal -------------------------------------------------------------------------------


async def test_b31_dispose_mid_turn_ends_it_disposed_and_notifies() -> None:
    seen, lifecycle = Seen(), Lifecycle()
    model = ScriptedModel([hang("partial")])
    async with agent_on(model, ("seen", seen), ("life", lifecycle)) as (harness, agent):
        session = agent.session
        agent.send("go")
        with anyio.fail_after(LIMIT):
            await seen["assistant/chunk"].wait()
            await agent.dispose()

        assert ends(session.events) == [(1, "disposed")]
        assert types(session.events)[-2:] == ["step/end", "turn/end"]
        assert check_invariants(session.events) == []
        assert model.aborted == 1
        assert lifecycle.statuses[-1] == "disposed"
        assert agent.agent.status == "disposed"
        assert harness.agents.get("a") is None
        assert harness.sessions.get(session.id) is None
        with pytest.raises(AgentDisposedError, match="disposed"):
            agent.send("too late")
        with pytest.raises(AgentDisposedError, match="disposed"):
            agent.steer("too late")
        with anyio.fail_after(LIMIT):
            await agent.when_idle()  # resolves at once on a disposed agent


async def test_b31_cancel_during_disposal_does_not_change_the_reason() -> None:
    seen = Seen()
    handle: list[AgentHandle] = []

    class CancelWhileClosing:
        @hookimpl
        def session_event(self, event: SessionEvent) -> None:
            if event.type == "step/end":
                handle[0].cancel()

    model = ScriptedModel([hang("partial")])
    async with agent_on(model, ("seen", seen), ("canceller", CancelWhileClosing())) as (
        _,
        agent,
    ):
        handle.append(agent)
        agent.send("go")
        with anyio.fail_after(LIMIT):
            await seen["assistant/chunk"].wait()
            await agent.dispose()

        assert ends(agent.session.events) == [(1, "disposed")]


async def test_b31_dispose_right_after_cancel_ends_the_turn_disposed() -> None:
    seen = Seen()
    model = ScriptedModel([hang("partial")])
    async with agent_on(model, ("seen", seen)) as (_, agent):
        agent.send("go")
        with anyio.fail_after(LIMIT):
            await seen["assistant/chunk"].wait()
            agent.cancel()
            await agent.dispose()

        assert ends(agent.session.events) == [(1, "disposed")]


async def test_b31_when_idle_on_a_disposing_agent_waits_for_the_loop_to_exit() -> None:
    seen = Seen()
    closing, release = anyio.Event(), anyio.Event()

    class SlowClose:
        @hookimpl
        async def session_event(self, event: SessionEvent) -> None:
            if event.type == "turn/end":
                closing.set()
                await release.wait()  # the loop cannot exit before this returns

    model = ScriptedModel([hang("partial")])
    async with agent_on(model, ("seen", seen), ("slow", SlowClose())) as (_, agent):
        agent.send("go")
        done: list[str] = []

        async def dispose() -> None:
            await agent.dispose()
            done.append("dispose")

        async def when_idle() -> None:
            await agent.when_idle()
            done.append("when_idle")

        with anyio.fail_after(LIMIT):
            await seen["assistant/chunk"].wait()
            async with anyio.create_task_group() as tg:
                tg.start_soon(dispose)
                await closing.wait()
                tg.start_soon(when_idle)
                await anyio.wait_all_tasks_blocked()
                assert done == []
                assert agent.agent.status != "disposed"
                release.set()

        assert sorted(done) == ["dispose", "when_idle"]
        assert agent.agent.status == "disposed"
        assert ends(agent.session.events) == [(1, "disposed")]


async def test_b31_dispose_completes_while_a_request_hook_is_stuck() -> None:
    hung = HungRequest()
    model = ScriptedModel([text("unused")])
    with anyio.fail_after(HANG):  # also unblocks the harness's teardown on failure
        async with agent_on(model, ("hung", hung)) as (_, agent):
            session = agent.session
            agent.send("go")
            await hung.entered.wait()
            with anyio.fail_after(HANG / 2):
                await agent.dispose()
            assert ends(session.events) == [(1, "disposed")]


async def test_b31_dispose_while_the_turn_is_about_to_start_completes() -> None:
    slow = SlowStart()
    model = ScriptedModel([hang("forever")])
    with anyio.fail_after(HANG):  # also unblocks the harness's teardown on failure
        async with agent_on(model, ("slow", slow)) as (_, agent):
            session = agent.session
            agent.send("go")
            await slow.entered.wait()
            async with anyio.create_task_group() as tg:
                tg.start_soon(agent.dispose)
                await anyio.wait_all_tasks_blocked()
                slow.gate.set()
            assert ends(session.events) in ([], [(1, "disposed")])
            assert check_invariants(session.events) == []


# -- 32: concurrent dispose --------------------------------------------------------------------


class SlowFlush:
    """``session_flush`` waits for ``release`` once ``armed``."""

    def __init__(self) -> None:
        self.armed = False
        self.entered = anyio.Event()
        self.release = anyio.Event()

    @hookimpl
    async def session_flush(self) -> None:
        if self.armed:
            self.entered.set()
            await self.release.wait()


async def test_b32_concurrent_dispose_calls_both_wait_for_the_one_teardown() -> None:
    flush, lifecycle = SlowFlush(), Lifecycle()
    model = ScriptedModel([text("hi")])
    async with agent_on(model, ("flush", flush), ("life", lifecycle)) as (harness, agent):
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "hello")
        flush.armed = True
        returned: list[int] = []

        async def dispose(caller: int) -> None:
            await agent.dispose()
            returned.append(caller)
            assert lifecycle.disposed == 1  # teardown finished before any caller returns

        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(dispose, 1)
                tg.start_soon(dispose, 2)
                await flush.entered.wait()
                await anyio.wait_all_tasks_blocked()
                assert returned == []
                flush.release.set()

            assert sorted(returned) == [1, 2]
            await agent.dispose()  # a later call returns at once
        assert lifecycle.disposed == 1
        assert harness.agents.get("a") is None


async def test_b32_a_cancelled_dispose_caller_does_not_cut_the_teardown_short() -> None:
    flush, lifecycle = SlowFlush(), Lifecycle()
    model = ScriptedModel([text("hi")])
    async with agent_on(model, ("flush", flush), ("life", lifecycle)) as (harness, agent):
        session = agent.session
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "hello")
        flush.armed = True
        first_scope = anyio.CancelScope()
        second_returned = False

        async def first() -> None:
            with first_scope:  # a caller that gives up, the way a timed-out UI would
                await agent.dispose()

        async def second() -> None:
            nonlocal second_returned
            await agent.dispose()
            second_returned = True

        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(first)
                tg.start_soon(second)
                await flush.entered.wait()
                first_scope.cancel()
                await anyio.wait_all_tasks_blocked()
                assert not second_returned
                assert lifecycle.disposed == 0
                flush.release.set()

        assert second_returned
        assert lifecycle.disposed == 1
        assert harness.agents.get("a") is None
        assert harness.sessions.get(session.id) is None


# -- 33: entering a live session id ------------------------------------------------------------


async def test_b33_enter_refuses_a_live_id_and_a_stale_session_cannot_remove_it() -> None:
    model = ScriptedModel([text("still here")])
    async with agent_on(model) as (harness, agent):
        live = agent.session
        stale = harness.sessions.prepare(live.id)

        with pytest.raises(DshError, match="already live"):
            harness.sessions.enter(stale)
        assert harness.sessions.remove(stale) is False
        assert harness.sessions.get(live.id) is live

        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "are you there?")
        assert ends(events) == [(1, "completed")]


async def test_b33_an_agent_cannot_be_created_or_resumed_onto_a_live_session() -> None:
    store = InMemoryPersistence()
    model = ScriptedModel([text("one")])
    async with agent_on(model, ("mem", store)) as (harness, agent):
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "hello")
        live = agent.session

        with pytest.raises(DshError, match="already live"):
            await harness.agents.create("b", session_id=live.id, options={"model": "scripted"})
        with pytest.raises(DshError, match="already live"):
            await harness.agents.resume("c", live.id, options={"model": "scripted"})

        assert harness.agents.get("b") is None
        assert harness.agents.get("c") is None
        assert harness.sessions.get(live.id) is live


# -- 31: when_idle around the start of a disposal ----------------------------------------------


async def test_b31_when_idle_just_after_an_idle_agent_starts_disposing_waits_for_exit() -> None:
    model = ScriptedModel([text("hi")])
    async with agent_on(model) as (_, agent):
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "hello")
            agent.agent.begin_stop()  # the loop task has not woken up yet
            await agent.when_idle()
            assert agent.agent.status == "disposed"  # the loop exited before it returned
            await agent.dispose()


async def test_b31_a_dispose_during_the_running_notification_opens_no_turn() -> None:
    class DisposeOnRunning:
        @hookimpl
        async def agent_status(self, agent: Any, status: str) -> None:
            if status == "running":
                agent.begin_stop()
                await anyio.lowlevel.checkpoint()

    model = ScriptedModel([text("never asked")])
    async with agent_on(model, ("disposer", DisposeOnRunning())) as (_, agent):
        agent.send("go")
        with anyio.fail_after(LIMIT):
            await agent.when_idle()
            await agent.dispose()

        assert types(agent.session.events) == []
        assert model.requests == []
        assert agent.agent.turns == 0
