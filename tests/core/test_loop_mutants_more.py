"""More loop behaviours that a hand mutation pass found unpinned by the other tests (the
first pass: test_loop_mutants.py).

Each test names the behaviour of shared/design/BEHAVIOURS.md it belongs to, where one
applies, and the change to the loop that it catches.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from loop_support import LIMIT, agent_on, ends, types

from dsh import ContinuationDecision, DshError, UserMessage, hookimpl
from dsh.agent import AgentHandle
from dsh.session import CORE_REDUCERS, Session, SessionEvent
from dsh.testing import (
    ErrorRecorder,
    ScriptedModel,
    check_invariants,
    run_turn,
    scripted_harness,
    text,
    tool_calls,
)
from dsh.turns import TurnResult

# -- 24 and 30: a reason to go on, given as the turn is aborted ----------------------------


async def test_b24_a_reason_to_continue_given_with_an_abort_is_not_logged() -> None:
    """Catches the continuation reason being logged as steering after an abort during
    the decision: no step of the aborted turn would answer it, and the next turn's
    request would carry it as if the user had said it."""
    handle: list[AgentHandle] = []

    class AbortButGoOn:
        @hookimpl
        def agent_turn_continuation(self, turn: int) -> ContinuationDecision | None:
            if turn != 1:
                return None
            handle[0].abort()  # a sync hook: no checkpoint, the decision still returns
            return ContinuationDecision(action="continue", reason="check the sum")

    model = ScriptedModel([tool_calls(("add", {"a": 1, "b": 2})), text("two")])
    async with agent_on(model, ("go-on", AbortButGoOn())) as (_, agent):
        handle.append(agent)
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "add")
            await run_turn(agent, "again")

        assert ends(events) == [(1, "aborted")]
        assert "steering/message" not in types(agent.session.events)
        assert UserMessage(content="check the sum") not in model.requests[1].messages
        assert check_invariants(agent.session.events) == []


# -- 34: failures of the loop task, apart ----------------------------------------------------


async def test_b34_a_turn_ending_between_loop_failures_keeps_the_agent_serving(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Catches ``_serve`` not resetting the count of the loop task's failures when a turn
    ends: failures with good turns between them would add up and dispose the agent, as
    only failures in a row may."""
    from dsh._steps import StepRunner
    from dsh.loop import FAILURES_IN_A_ROW

    run_turn_of = StepRunner.run_turn
    good = FAILURES_IN_A_ROW  # the turn between two runs of failures
    failing = {*range(1, good), *range(good + 1, 2 * good)}

    async def broken_sometimes(self: StepRunner, turn: Any, *args: Any) -> None:
        if turn.number in failing:  # a bug of the loop's own, outside the containment
            raise RuntimeError(f"turn {turn.number} broke")
        await run_turn_of(self, turn, *args)

    monkeypatch.setattr(StepRunner, "run_turn", broken_sometimes)
    model = ScriptedModel([text("fine"), text("still fine")])
    async with scripted_harness(model, plugins=[("errors", ErrorRecorder())]) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            for number in range(1, 2 * good + 1):
                if number in failing:
                    with pytest.raises(DshError, match=f"turn {number} failed"):
                        await agent.prompt(f"prompt {number}")
                else:
                    result = await agent.prompt(f"prompt {number}")
                    assert (result.turn, result.reason) == (number, "completed")

        assert agent.status == "idle"


# -- 36: prompt() returns once its turn is flushed -------------------------------------------


async def test_b36_prompt_returns_only_after_the_flush_of_its_turn() -> None:
    """Catches the loop counting a turn flushed before its ``session_flush`` returned:
    ``prompt()`` woken meanwhile (a ``cancel()`` dropping another prompt wakes it)
    returned before the flush failed, without its ``save_error``."""

    class GatedFailingFlush:
        def __init__(self) -> None:
            self.started = anyio.Event()
            self.release = anyio.Event()

        @hookimpl
        async def session_flush(self) -> None:
            self.started.set()
            await self.release.wait()
            raise OSError("disk full")

    flush = GatedFailingFlush()
    results: list[TurnResult] = []
    model = ScriptedModel([text("hello")])
    async with agent_on(model, ("flush", flush)) as (_, agent):

        async def ask() -> None:
            results.append(await agent.prompt("one"))

        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(ask)
                await flush.started.wait()
                agent.send("two")
                agent.cancel()  # drops "two", waking whoever waits on a turn
                await anyio.wait_all_tasks_blocked()
                early = list(results)  # while the flush of its turn has not returned
                flush.release.set()

        assert early == []
        assert [(r.turn, r.reason) for r in results] == [(1, "completed")]
        assert results[0].save_error is not None


# -- 42: the loop's own logging folds the history as a replay does ---------------------------


async def test_b42_a_reducer_replacing_history_for_a_core_type_works_live_as_on_replay() -> None:
    """Catches ``_record`` (how the loop logs) ignoring a reducer's new list, which
    ``_fold`` (a replay) keeps: a session built with its own reducer for one of the
    core's types derived another history live than from its log."""

    def only_the_last_steer(history: list[Any], event: SessionEvent) -> list[Any]:
        return [UserMessage(content=event.data["content"])]

    reducers = {**CORE_REDUCERS, "steering/message": only_the_last_steer}
    live = Session("s", reducers=reducers)
    await live._record("user/message", {"content": "one"})
    await live._record("steering/message", {"content": "two"})
    await live._record("user/message", {"content": "three"})

    expected = [UserMessage(content="two"), UserMessage(content="three")]
    assert list(live.history) == expected
    assert list(Session("s", live.events, reducers=reducers).history) == expected


# -- 30: an abort after a turn ended bounds nothing in the next ------------------------------


async def test_b30_an_abort_during_a_flush_does_not_cut_the_next_turns_slow_observer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Catches the loop not resetting the agent's grace as a turn starts: an abort while
    the last turn's flush was in flight began a grace that then cut short a slow
    observer of the queued turn after it (reported as its failure)."""
    import dsh._grace

    grace = 0.1
    monkeypatch.setattr(dsh._grace, "GRACE_SECONDS", grace)

    class GatedFlush:
        def __init__(self) -> None:
            self.started = anyio.Event()
            self.release = anyio.Event()

        @hookimpl
        async def session_flush(self) -> None:
            if not self.release.is_set():
                self.started.set()
                await self.release.wait()

    class SlowOnTheSecondPrompt:
        done = False

        @hookimpl
        async def session_event(self, event: SessionEvent) -> None:
            if event.type == "user/message" and event.data["content"] == "two":
                await anyio.sleep(grace * 3)  # slower than a grace, not stuck
                self.done = True

    flush, slow, errors = GatedFlush(), SlowOnTheSecondPrompt(), ErrorRecorder()
    model = ScriptedModel([text("one"), text("two")])
    plugins = (("flush", flush), ("slow", slow), ("errors", errors))
    async with agent_on(model, *plugins) as (_, agent):
        with anyio.fail_after(LIMIT):
            agent.send("one")
            await flush.started.wait()
            agent.send("two")
            agent.abort()  # turn 1 has ended: only its flush gets the grace
            flush.release.set()
            await agent.when_idle()

        assert ends(agent.session.events) == [(1, "completed"), (2, "completed")]
        assert slow.done
        assert errors.failures == []
