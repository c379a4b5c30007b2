"""Conformance: behaviours 22-33 (continuation; cancellation, abort, disposal).

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
from loop_support import LIMIT, Seen, Tools, agent_on, contents, ends, types

from dsh import ContinuationDecision, DshError, UserMessage, hookimpl
from dsh._steps import StepRunner
from dsh.agent import AgentHandle
from dsh.loop import AgentDisposedError, ReactLoopAgent
from dsh.session import Session, SessionEvent
from dsh.testing import (
    InMemoryPersistence,
    ScriptedModel,
    check_invariants,
    hang,
    run_turn,
    scripted_harness,
    text,
    tool_calls,
)

# Seconds: the bound of tests whose failure mode is a hang (the harness's teardown too).
# Only a failing run waits it out; a busy machine can take more than a second to build
# and tear down a harness (1 s failed under CPU load).
HANG = 30


# -- small plugins shared by the tests ------------------------------------------------


class Lifecycle:
    """Records status notifications and ``agent_disposed`` calls."""

    def __init__(self) -> None:
        self.statuses: list[str] = []
        self.disposed = 0

    @hookimpl
    def agent_status(self, status: str) -> None:
        self.statuses.append(status)

    @hookimpl
    def agent_disposed(self) -> None:
        self.disposed += 1


class Decisions:
    """Records the continuation decision each step starts from (runs first)."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, str]] = []

    @hookimpl(tryfirst=True)
    def agent_turn_continuation(self, decision: ContinuationDecision, step: int) -> None:
        self.seen.append((step, decision.action))


# -- 22: the default continuation decision --------------------------------------------


async def test_b22_a_step_without_tool_calls_or_steering_stops() -> None:
    decisions = Decisions()
    model = ScriptedModel([text("hello"), text("never asked")])
    async with agent_on(model, ("decisions", decisions)) as (_, agent):
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "hi")

        assert decisions.seen == [(1, "stop")]
        assert len(model.requests) == 1


async def test_b22_tool_calls_make_the_default_continue() -> None:
    decisions = Decisions()
    model = ScriptedModel([tool_calls(("add", {"a": 1, "b": 2})), text("3")])
    async with agent_on(model, ("decisions", decisions)) as (_, agent):
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "1+2?")

        assert decisions.seen == [(1, "continue"), (2, "stop")]
        assert types(agent.session.events).count("step/start") == 2


async def test_b22_steering_drained_in_a_step_makes_the_default_continue() -> None:
    decisions = Decisions()
    handle: list[AgentHandle] = []

    def answer_and_get_steered(request: Any) -> str:
        handle[0].steer("also say bye")  # arrives while this step streams
        return "hello"

    model = ScriptedModel([answer_and_get_steered, text("bye")])
    async with agent_on(model, ("decisions", decisions)) as (_, agent):
        handle.append(agent)
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "hi")

        assert decisions.seen == [(1, "continue"), (2, "stop")]
        assert contents(agent.session.events, "steering/message") == ["also say bye"]
        assert model.requests[1].messages[-1] == UserMessage(content="also say bye")


# -- 23: a stop decision wins over tool calls -------------------------------------------


class StepBudget:
    """A budget guard: no turn gets more than ``steps`` steps."""

    def __init__(self, steps: int) -> None:
        self.steps = steps

    @hookimpl
    def agent_turn_continuation(self, step: int) -> ContinuationDecision | None:
        return ContinuationDecision(action="stop") if step >= self.steps else None


async def test_b23_a_plugin_stop_ends_the_turn_even_after_tool_calls() -> None:
    call = tool_calls(("add", {"a": 1, "b": 2}))
    model = ScriptedModel([call, call, call, text("unreachable")])
    async with agent_on(model, ("budget", StepBudget(2))) as (_, agent):
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "keep adding")

        assert ends(events) == [(1, "completed")]
        assert types(events).count("step/start") == 2
        assert len(model.requests) == 2
        # the tools of the last step still ran before the turn stopped
        assert [e.data["content"] for e in events if e.type == "tool/result"] == ["3", "3"]
        assert check_invariants(agent.session.events) == []


# -- 24: continue with a reason -----------------------------------------------------------


class AskToCheck:
    def __init__(self, reason: str | None) -> None:
        self.reason = reason

    @hookimpl
    def agent_turn_continuation(self, step: int) -> ContinuationDecision | None:
        if step == 1:
            return ContinuationDecision(action="continue", reason=self.reason)
        return None


async def test_b24_continue_with_a_reason_logs_it_as_steering_for_the_next_step() -> None:
    model = ScriptedModel([text("draft"), text("final")])
    async with agent_on(model, ("check", AskToCheck("check your answer"))) as (_, agent):
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "question")

        steering = [e for e in events if e.type == "steering/message"]
        assert [e.data["content"] for e in steering] == ["check your answer"]
        assert steering[0].data.get("source") == "plugin"
        # logged after step 1's answer, before step 2's request, in the same turn
        seqs = {(e.type, e.data.get("step")): e.seq for e in events}
        first_answer = next(e.seq for e in events if e.type == "assistant/message")
        assert first_answer < steering[0].seq < seqs[("step/start", 2)]
        assert model.requests[1].messages[-1] == UserMessage(content="check your answer")
        assert ends(events) == [(1, "completed")]
        assert check_invariants(agent.session.events) == []


async def test_b24_continue_without_a_reason_adds_no_steering() -> None:
    model = ScriptedModel([text("draft"), text("final")])
    async with agent_on(model, ("check", AskToCheck(None))) as (_, agent):
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "question")

        assert types(events).count("step/start") == 2
        assert "steering/message" not in types(events)


# -- 25: the step limit -------------------------------------------------------------------


def always_add(request: Any) -> Any:
    return tool_calls(("add", {"a": 1, "b": 1}))


async def test_b25_max_steps_ends_a_runaway_turn_with_a_clear_reason() -> None:
    model = ScriptedModel([always_add, always_add, always_add, text("fine")])
    async with agent_on(model, max_steps=3) as (_, agent):
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "loop forever")

        assert types(events).count("step/start") == 3
        assert len(model.requests) == 3
        end = [e.data for e in events if e.type == "turn/end"]
        assert [d["reason"] for d in end] == ["error"]
        assert "max_steps" in end[0]["error"]["message"]
        assert end[0]["error"]["code"] == "MAX_STEPS"
        assert "3" in end[0]["error"]["message"]
        assert check_invariants(agent.session.events) == []

        with anyio.fail_after(LIMIT):
            later = await run_turn(agent, "now stop")
        assert ends(later) == [(2, "completed")]


async def test_b25_there_is_a_default_step_limit() -> None:
    model = ScriptedModel([always_add] * 60)
    async with agent_on(model) as (_, agent):
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "loop forever")

        assert ends(events) == [(1, "error")]
        assert len(model.requests) == 50  # documented default of ``max_steps``


# -- 26: cancel while idle ------------------------------------------------------------------


async def test_b26_cancel_on_an_idle_agent_is_a_no_op() -> None:
    lifecycle = Lifecycle()
    model = ScriptedModel([text("one"), text("two")])
    async with agent_on(model, ("life", lifecycle)) as (_, agent):
        agent.cancel()  # on a fresh agent
        with anyio.fail_after(LIMIT):
            await agent.when_idle()
            await run_turn(agent, "first")
        logged, statuses = len(agent.session.events), list(lifecycle.statuses)

        agent.cancel()  # idle, nothing queued, after a turn
        with anyio.fail_after(LIMIT):
            await agent.when_idle()
        assert len(agent.session.events) == logged
        assert lifecycle.statuses == statuses

        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "second")
        assert ends(events) == [(2, "completed")]
        assert contents(events, "user/message") == ["second"]


# -- 27: cancel while streaming ---------------------------------------------------------------


async def test_b27_cancel_while_streaming_aborts_the_call_and_drops_queued_and_steering() -> None:
    seen = Seen()
    model = ScriptedModel([hang("partial"), text("later")])
    async with agent_on(model, ("seen", seen)) as (_, agent):
        agent.send("go")
        with anyio.fail_after(LIMIT):
            await seen["assistant/chunk"].wait()
        agent.send("queued meanwhile")
        agent.steer("steered meanwhile")
        agent.cancel()
        with anyio.fail_after(LIMIT):
            await agent.when_idle()

        events = agent.session.events
        assert model.aborted == 1
        assert ends(events) == [(1, "aborted")]
        assert types(events)[-2:] == ["step/end", "turn/end"]
        assert check_invariants(events) == []
        assert agent.agent.turns == 1

        with anyio.fail_after(LIMIT):
            later = await run_turn(agent, "later")
        assert contents(later, "user/message") == ["later"]
        all_text = [e.data.get("content") for e in agent.session.events]
        assert "queued meanwhile" not in all_text
        assert "steered meanwhile" not in all_text


# -- 28: cancel before the turn starts -----------------------------------------------------


async def test_b28_cancel_right_after_send_drops_the_prompt() -> None:
    model = ScriptedModel([text("kept")])
    async with agent_on(model) as (_, agent):
        agent.send("dropped")
        agent.cancel()
        with anyio.fail_after(LIMIT):
            await agent.when_idle()

        assert agent.session.events == []
        assert agent.agent.turns == 0
        assert model.requests == []

        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "kept")
        assert ends(events) == [(1, "completed")]
        assert contents(agent.session.events, "user/message") == ["kept"]


class SlowStart:
    """Holds the ``running`` status notification until ``gate`` is set: the loop has
    taken the prompt but not yet opened its turn."""

    def __init__(self) -> None:
        self.entered = anyio.Event()
        self.gate = anyio.Event()

    @hookimpl
    async def agent_status(self, status: str) -> None:
        if status == "running" and not self.gate.is_set():
            self.entered.set()
            await self.gate.wait()


async def test_b28_cancel_while_the_turn_is_about_to_start_drops_it() -> None:
    slow = SlowStart()
    model = ScriptedModel([text("should not run")])
    async with agent_on(model, ("slow", slow)) as (_, agent):
        agent.send("dropped")
        with anyio.fail_after(LIMIT):
            await slow.entered.wait()
            agent.cancel()
            slow.gate.set()
            await agent.when_idle()

        assert "turn/start" not in types(agent.session.events)
        assert model.requests == []


# -- 29: a cancel governs exactly one turn ----------------------------------------------------


async def test_b29_a_prompt_sent_after_the_cancelled_turn_settled_runs() -> None:
    seen = Seen()
    model = ScriptedModel([hang("partial"), text("answer")])
    async with agent_on(model, ("seen", seen)) as (_, agent):
        agent.send("first")
        with anyio.fail_after(LIMIT):
            await seen["assistant/chunk"].wait()
            agent.cancel()
            await agent.when_idle()
            events = await run_turn(agent, "second")

        assert ends(events) == [(2, "completed")]
        assert contents(events, "user/message") == ["second"]
        assert model.requests[-1].messages[-1] == UserMessage(content="second")


async def test_b29_a_prompt_sent_just_after_cancel_is_not_dropped() -> None:
    seen = Seen()
    model = ScriptedModel([hang("partial"), text("answer")])
    async with agent_on(model, ("seen", seen)) as (_, agent):
        agent.send("first")
        with anyio.fail_after(LIMIT):
            await seen["assistant/chunk"].wait()
        agent.cancel()
        agent.send("second")  # the cancelled turn has not closed yet
        with anyio.fail_after(LIMIT):
            await agent.when_idle()

        events = agent.session.events
        assert ends(events) == [(1, "aborted"), (2, "completed")]
        assert contents(events, "user/message") == ["first", "second"]


async def test_b29_a_steer_after_cancelling_a_turn_about_to_start_still_runs() -> None:
    slow = SlowStart()
    model = ScriptedModel([text("answer")])
    async with agent_on(model, ("slow", slow)) as (_, agent):
        agent.send("dropped")
        with anyio.fail_after(LIMIT):
            await slow.entered.wait()
            agent.cancel()
            agent.steer("sent after the cancel")
            slow.gate.set()
            await agent.when_idle()

        events = agent.session.events
        assert contents(events, "user/message") == ["sent after the cancel"]
        assert ends(events) == [(1, "completed")]


# -- 30: abort ----------------------------------------------------------------------------------


async def test_b30_abort_stops_the_step_and_queued_prompts_still_run() -> None:
    seen = Seen()
    model = ScriptedModel([hang("partial"), text("next answer")])
    async with agent_on(model, ("seen", seen)) as (_, agent):
        agent.send("first")
        with anyio.fail_after(LIMIT):
            await seen["assistant/chunk"].wait()
        agent.send("queued")
        agent.steer("steered")
        agent.abort()
        with anyio.fail_after(LIMIT):
            await agent.when_idle()

        events = agent.session.events
        assert model.aborted == 1
        assert ends(events) == [(1, "aborted"), (2, "completed")]
        second_turn = events[next(e.seq for e in events if e.data.get("turn") == 2) :]
        assert sorted(contents(second_turn, "user/message")) == ["queued", "steered"]
        assert check_invariants(events) == []


async def test_b30_abort_during_a_tool_stops_it_and_skips_the_rest_of_the_batch() -> None:
    tools = Tools()
    ran: list[int] = []

    class CountAdds:
        @hookimpl(tryfirst=True)
        def tools_execute(self, call: Any) -> None:
            if call.name == "add":
                ran.append(1)

    model = ScriptedModel([tool_calls(("block", {}), ("add", {"a": 1, "b": 2}))])
    async with scripted_harness(
        model, plugins=[("tools", tools), ("count", CountAdds())]
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        agent.send("go")
        with anyio.fail_after(LIMIT):
            await tools.started.wait()
        agent.abort()
        with anyio.fail_after(LIMIT):
            await agent.when_idle()

        events = agent.session.events
        results = {e.data["call_id"]: e.data for e in events if e.type == "tool/result"}
        assert set(results) == {"call-0", "call-1"}
        assert results["call-0"]["is_error"] and results["call-1"]["is_error"]
        assert ran == []  # the call after the aborted one never reached a plugin
        assert ends(events) == [(1, "aborted")]
        assert check_invariants(events) == []


async def test_b30_abort_on_an_idle_agent_does_not_touch_the_next_turn() -> None:
    model = ScriptedModel([text("fine")])
    async with agent_on(model) as (_, agent):
        agent.abort()
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "hello")
        assert ends(events) == [(1, "completed")]


class HoldsSteering:
    """While the first steering item is being logged, signals and waits for ``release``."""

    def __init__(self) -> None:
        self.logging_first = anyio.Event()
        self.release = anyio.Event()

    @hookimpl
    async def session_event(self, event: SessionEvent) -> None:
        if event.type == "steering/message" and event.data["content"] == "s1":
            self.logging_first.set()
            await self.release.wait()


async def test_b30_steering_being_logged_when_the_step_is_aborted_is_not_lost() -> None:
    holds = HoldsSteering()
    handle: list[AgentHandle] = []

    def answer_and_get_steered_twice(request: Any) -> str:
        handle[0].steer("s1")
        handle[0].steer("s2")
        return "ok"

    model = ScriptedModel([answer_and_get_steered_twice, text("next"), text("more")])
    async with agent_on(model, ("holds", holds)) as (_, agent):
        handle.append(agent)
        agent.send("go")
        with anyio.fail_after(LIMIT):
            await holds.logging_first.wait()
            agent.abort()
            holds.release.set()
            await agent.when_idle()

        events = agent.session.events
        logged = contents(events, "steering/message") + contents(events, "user/message")
        assert "s1" in logged
        assert "s2" in logged
        assert check_invariants(events) == []


class HungRequest:
    """An ``agent_request`` impl stuck on slow I/O (a summariser call, say)."""

    def __init__(self) -> None:
        self.entered = anyio.Event()

    @hookimpl
    async def agent_request(self) -> None:
        self.entered.set()
        await anyio.sleep_forever()


async def test_b30_abort_stops_a_step_waiting_in_a_request_hook() -> None:
    hung = HungRequest()
    model = ScriptedModel([text("unused")])
    with anyio.fail_after(HANG):  # also unblocks the harness's teardown on failure
        async with agent_on(model, ("hung", hung)) as (_, agent):
            agent.send("go")
            await hung.entered.wait()
            agent.abort()
            with anyio.fail_after(HANG / 2):
                await agent.when_idle()
            assert ends(agent.session.events) == [(1, "aborted")]


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
    async def broken_step(self: StepRunner, turn: Any, step: int) -> bool:
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


# -- the loop's own bookkeeping: status, turn numbers, when_idle ------------------------------


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
