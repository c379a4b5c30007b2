"""Conformance: behaviours 26-30 (cancel on an idle, streaming or starting agent; a cancel
governs one turn; abort stops only the in-flight step).

Each test names the numbered behaviour of shared/design/BEHAVIOURS.md it checks. The
loop is driven with a scripted model; tests wait on session events, status
notifications or ``when_idle()``, always under ``anyio.fail_after``. Entry-point plugins
may be installed (the nox matrix), so event type lists are filtered to the core's types.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
from behaviours_control_support import HANG, HungRequest, Lifecycle, SlowStart
from loop_support import LIMIT, Seen, Tools, agent_on, contents, ends, types

from dsh import UserMessage, hookimpl
from dsh.agent import AgentHandle
from dsh.session import SessionEvent
from dsh.testing import (
    ScriptedModel,
    check_invariants,
    hang,
    run_turn,
    scripted_harness,
    text,
    tool_calls,
)

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


async def test_b30_abort_as_the_turn_starts_ends_it_aborted_keeping_its_prompt() -> None:
    # Unlike cancel() (28), abort() drops no prompt: the turn that took it is the one in
    # flight, and it ends aborted before its first model call; the prompt stays in history.
    slow = SlowStart()
    model = ScriptedModel([text("next")])
    async with agent_on(model, ("slow", slow)) as (_, agent):
        agent.send("taken")
        with anyio.fail_after(LIMIT):
            await slow.entered.wait()
            agent.abort()
            slow.gate.set()
            await agent.when_idle()
            await run_turn(agent, "then")

        assert ends(agent.session.events) == [(1, "aborted"), (2, "completed")]
        assert contents(agent.session.events, "user/message") == ["taken", "then"]
        (request,) = model.requests  # none for the aborted turn
        assert [m.content for m in request.messages if isinstance(m, UserMessage)] == [
            "taken",
            "then",
        ]


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
