"""Conformance: behaviour 35 for a cancellation from outside the loop (the turn still
closes, observers see its closers), and the loop's own bookkeeping of behaviours 1-2
(each idle transition notified once, ``turns`` while a turn runs).

Each test names the numbered behaviour of shared/design/BEHAVIOURS.md it checks. The
loop is driven with a scripted model; tests wait on session events, status
notifications or ``when_idle()``, always under ``anyio.fail_after``. Entry-point plugins
may be installed (the nox matrix), so event type lists are filtered to the core's types.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from behaviours_control_support import Lifecycle
from loop_support import LIMIT, Seen, agent_on, ends, types

from dsh import hookimpl
from dsh._steps import StepRunner
from dsh.agent import AgentHandle
from dsh.loop import ReactLoopAgent
from dsh.session import Session, SessionEvent
from dsh.testing import (
    ScriptedModel,
    check_invariants,
    hang,
    run_turn,
    text,
)

# -- 35: every exit path of a turn closes it ----------------------------------------------------


class Flushes:
    """Records the id of every session flushed."""

    def __init__(self) -> None:
        self.ids: list[str] = []

    @hookimpl
    def session_flush(self, session: Any) -> None:
        self.ids.append(session.id)


class YieldingObserver:
    """A session observer with async work for every event (it yields to the event loop
    first), after the harness's own; ``types`` is what it finished seeing."""

    def __init__(self) -> None:
        self.types: list[str] = []

    def wrap(self, session: Session) -> None:
        inner = session.observer

        async def observe(event: SessionEvent, before: Awaitable[None] | None) -> None:
            if before is not None:
                await before
            await anyio.lowlevel.checkpoint()
            self.types.append(event.type)

        def observer(session: Session, event: SessionEvent) -> Awaitable[None]:
            return observe(event, None if inner is None else inner(session, event))

        session.observer = observer


async def run_cancelled_from_outside(
    *plugins: tuple[str, object], observer: YieldingObserver | None = None
) -> tuple[ReactLoopAgent, Lifecycle]:
    """Run an agent's loop task in a task group of the test's own and cancel that group
    while the turn streams; returns the loop agent and its status notifications."""
    seen, lifecycle = Seen(), Lifecycle()
    model = ScriptedModel([hang("partial")])
    async with agent_on(model, ("seen", seen), ("life", lifecycle), *plugins) as (harness, _):
        session = harness.sessions.prepare("outer-session")
        if observer is not None:
            observer.wrap(session)
        agent = ReactLoopAgent(
            "outer",
            session,
            relay=harness.relay,
            models=harness.models,
            tools=harness.tools,
            options={"model": "scripted"},
        )
        lifecycle.statuses.clear()
        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(agent.run)
                agent.send("go")
                await seen["assistant/chunk"].wait()
                tg.cancel_scope.cancel()
        return agent, lifecycle


async def test_b35_an_outer_cancellation_ends_the_turn_aborted_and_propagates() -> None:
    flushes = Flushes()
    agent, lifecycle = await run_cancelled_from_outside(("flushes", flushes))

    events = agent.session.events
    assert ends(events) == [(1, "aborted")]
    assert types(events)[-2:] == ["step/end", "turn/end"]
    assert check_invariants(events) == []
    # the cancellation left the turn at once: the loop neither flushed after the turn
    # nor parked idle again
    assert "outer-session" not in flushes.ids
    assert "idle" not in lifecycle.statuses
    assert agent.status == "disposed"


async def test_b35_an_async_observer_still_sees_the_closers_of_a_cancelled_turn() -> None:
    observer = YieldingObserver()
    agent, _ = await run_cancelled_from_outside(observer=observer)

    assert ends(agent.session.events) == [(1, "aborted")]
    assert observer.types[-2:] == ["step/end", "turn/end"]


async def test_b35_a_turn_aborted_and_then_failing_ends_aborted_with_the_error() -> None:
    handle: list[AgentHandle] = []

    class AbortThenRaise:
        @hookimpl
        def agent_step_result(self) -> None:
            handle[0].abort()
            raise RuntimeError("broken after the abort")

    model = ScriptedModel([text("hello")])
    async with agent_on(model, ("abort-then-raise", AbortThenRaise())) as (_, agent):
        handle.append(agent)
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "hi")

        assert ends(events) == [(1, "aborted")]  # the strongest reason wins
        assert "broken after the abort" in events[-1].data["error"]["message"]
        assert check_invariants(agent.session.events) == []


async def test_b35_an_unexpected_exception_ends_the_turn_with_an_internal_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def broken_step(self: StepRunner, turn: Any, step: int, more: bool) -> bool:
        turn.open_step = step
        raise RuntimeError("a bug in the loop")

    monkeypatch.setattr(StepRunner, "_step", broken_step)
    model = ScriptedModel([])
    async with agent_on(model) as (_, agent):
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "hi")

        assert ends(events) == [(1, "error")]
        assert events[-1].data["error"] == {
            "code": "INTERNAL",
            "message": "RuntimeError: a bug in the loop",
        }
        assert types(events)[-2:] == ["step/end", "turn/end"]


# -- the loop's own bookkeeping: status, turn numbers ------------------------------


async def test_b02_turns_is_the_running_turns_number_while_it_runs() -> None:
    seen: list[tuple[int, int]] = []

    class Numbers:
        @hookimpl
        def agent_step_result(self, agent: Any, turn: int) -> None:
            seen.append((agent.turns, turn))

    model = ScriptedModel([text("one"), text("two")])
    async with agent_on(model, ("numbers", Numbers())) as (_, agent):
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "first")
            await run_turn(agent, "second")

        assert seen == [(1, 1), (2, 2)]
        assert agent.agent.turns == 2


async def test_b01_each_idle_transition_is_notified_once() -> None:
    lifecycle = Lifecycle()
    model = ScriptedModel([text("one"), text("two")])
    async with agent_on(model, ("life", lifecycle)) as (_, agent):
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "first")
            await run_turn(agent, "second")
            agent.send("dropped")  # wakes the loop, which finds nothing to run
            agent.cancel()
            await anyio.wait_all_tasks_blocked()
            await agent.when_idle()

        assert lifecycle.statuses == ["running", "idle", "running", "idle"]
