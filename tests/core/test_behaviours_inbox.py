"""Conformance: behaviours 1-7 of BEHAVIOURS.md (the inbox: send, steer, queued prompts,
late steering, a disposed agent). Steps, requests and streaming (8-11) are in
test_behaviours_requests.py.

Every test is named after the behaviour it checks (``test_bNN_...``). The tests hold
under any set of installed plugins: logs are compared on the core's event types only.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest
from behaviours_steps_support import FAILED_STEP, MODEL, end, of_type, said, shape, start, step
from loop_support import Seen, contents

from dsh import ContinuationDecision, DshError, ModelRequest, hookimpl
from dsh.invariants import check_invariants
from dsh.loop import AgentDisposedError
from dsh.session import SessionEvent
from dsh.testing import (
    Reply,
    ScriptedModel,
    fail,
    hang,
    run_turn,
    scripted_harness,
    text,
)


def simple_turn(number: int, prompt: str, answer: str, reason: str = "completed") -> list[Any]:
    """The shape of a one-step turn without tools."""
    return [*start(number, prompt), *step(1, answer), *end(number, reason)]


class Statuses:
    """Records ``agent_status`` notifications; ``running`` is set on the first one."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.running = anyio.Event()

    @hookimpl
    def agent_status(self, status: str) -> None:
        self.seen.append(status)
        if status == "running":
            self.running.set()


class On:
    """Calls ``action(event)`` for every event logged (a ``session_event`` observer)."""

    def __init__(self, action: Any) -> None:
        self.action = action

    @hookimpl
    def session_event(self, event: SessionEvent) -> None:
        self.action(event)


# -- 1-7: inbox, send and steer ---------------------------------------------------------


async def test_b01_send_queues_and_returns_without_flipping_status() -> None:
    statuses = Statuses()
    async with scripted_harness(ScriptedModel([text("hi")]), plugins=[statuses]) as h:
        agent = await h.agents.create("a", options=MODEL)
        agent.send("hello")
        assert agent.agent.status == "idle"
        assert statuses.seen == []
        assert list(agent.agent.inbox.queued) == ["hello"]
        assert list(agent.session.events) == []
        with anyio.fail_after(5):
            await statuses.running.wait()  # the loop, not send(), flipped the status
            await agent.when_idle()
        assert statuses.seen == ["running", "idle"]
        assert shape(agent.session.events) == simple_turn(1, "hello", "hi")


async def test_b02_burst_of_sends_one_at_a_time_gives_one_turn_each() -> None:
    model = ScriptedModel([text(f"r{i}") for i in range(5)])
    async with scripted_harness(model) as h:
        agent = await h.agents.create("a", options={**MODEL, "queue_mode": "one-at-a-time"})
        for i in range(5):
            agent.send(f"p{i}")
        with anyio.fail_after(5):
            await agent.when_idle()
        expected = [row for i in range(5) for row in simple_turn(i + 1, f"p{i}", f"r{i}")]
        assert shape(agent.session.events) == expected
        assert agent.agent.turns == 5
        assert check_invariants(agent.session.events) == []
        model.assert_complete()


async def test_b02_concurrent_sends_lose_nothing_and_turns_increase() -> None:
    model = ScriptedModel([text(f"r{i}") for i in range(40)])
    sent: list[str] = []
    async with scripted_harness(model) as h:
        agent = await h.agents.create("a", options=MODEL)

        async def sender(i: int) -> None:
            for _ in range(i % 7):
                await anyio.lowlevel.checkpoint()  # interleave with the running turns
            sent.append(f"p{i}")
            agent.send(f"p{i}")

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                for i in range(40):
                    tg.start_soon(sender, i)
            await agent.when_idle()
        events = agent.session.events
        assert [e.data["content"] for e in of_type(events, "user/message")] == sent
        turns = [e.data["turn"] for e in of_type(events, "turn/start")]
        assert turns == list(range(1, len(turns) + 1))
        assert len(turns) > 1  # sends landed while turns were running
        assert [e.data["reason"] for e in of_type(events, "turn/end")] == ["completed"] * len(turns)
        assert len(model.requests) == len(turns)
        assert check_invariants(events) == []


def sending(agent: list[Any], *prompts: str, then: str) -> Any:
    """A script entry that sends ``prompts`` while its turn runs, then answers ``then``."""

    def entry(request: ModelRequest) -> str:
        for prompt in prompts:
            agent[0].send(prompt)
        return then

    return entry


async def test_b03_prompts_sent_while_running_are_batched_into_the_next_turn() -> None:
    handle: list[Any] = []
    model = ScriptedModel([sending(handle, "b", "c", then="A"), text("BC")])
    async with scripted_harness(model) as h:
        handle.append(agent := await h.agents.create("a", options=MODEL))
        with anyio.fail_after(5):
            await run_turn(agent, "a")
        expected = [*simple_turn(1, "a", "A"), *start(2, "b", "c"), *step(1, "BC"), *end(2)]
        assert shape(agent.session.events) == expected
        history = [("user", "a"), ("assistant", "A"), ("user", "b"), ("user", "c")]
        assert said(model.requests[1].messages) == history
        model.assert_complete()


async def test_b03_one_at_a_time_runs_one_turn_per_queued_prompt() -> None:
    handle: list[Any] = []
    model = ScriptedModel([sending(handle, "b", "c", then="A"), text("B"), text("C")])
    async with scripted_harness(model) as h:
        options = {**MODEL, "queue_mode": "one-at-a-time"}
        handle.append(agent := await h.agents.create("a", options=options))
        with anyio.fail_after(5):
            await run_turn(agent, "a")
        expected = [*simple_turn(1, "a", "A"), *simple_turn(2, "b", "B"), *simple_turn(3, "c", "C")]
        assert shape(agent.session.events) == expected
        assert said(model.requests[1].messages) == [
            ("user", "a"),
            ("assistant", "A"),
            ("user", "b"),
        ]
        assert said(model.requests[2].messages)[-2:] == [("assistant", "B"), ("user", "c")]


async def test_b04_steer_on_an_idle_agent_is_a_send() -> None:
    statuses = Statuses()
    model = ScriptedModel([text("A"), text("B")])
    async with scripted_harness(model, plugins=[statuses]) as h:
        agent = await h.agents.create("a", options=MODEL)
        agent.steer("a")
        assert agent.agent.status == "idle"
        assert list(agent.agent.inbox.queued) == ["a"]
        with anyio.fail_after(5):
            await agent.when_idle()
            agent.send("b")  # a send right before a steer: both are queued prompts
            agent.steer("c")
            await agent.when_idle()
        expected = [*simple_turn(1, "a", "A"), *start(2, "b", "c"), *step(1, "B"), *end(2)]
        assert shape(agent.session.events) == expected
        assert statuses.seen == ["running", "idle", "running", "idle"]


def steering(agent: list[Any], prompt: str, then: Reply | str) -> Any:
    """A script entry that steers ``prompt`` while its step streams, then answers."""

    def entry(request: ModelRequest) -> Reply | str:
        agent[0].steer(prompt)
        return then

    return entry


async def test_b05_steer_while_running_is_logged_before_the_next_request() -> None:
    handle: list[Any] = []
    model = ScriptedModel([steering(handle, "also B", then="A"), text("A and B")])
    async with scripted_harness(model) as h:
        handle.append(agent := await h.agents.create("a", options=MODEL))
        with anyio.fail_after(5):
            events = await run_turn(agent, "say A")
        # no tool calls, yet the steering makes the turn take a second step
        steered = ("steering/message", "also B")
        expected = [*start(1, "say A"), *step(1, "A", steered), *step(2, "A and B"), *end(1)]
        assert shape(events) == expected
        history = [("user", "say A"), ("assistant", "A"), ("user", "also B")]
        assert said(model.requests[1].messages) == history
        model.assert_complete()


async def test_b05_steer_before_the_first_request_joins_it() -> None:
    handle: list[Any] = []

    def steer_on_prompt(event: SessionEvent) -> None:
        if event.type == "user/message":
            handle[0].steer("and be brief")

    model = ScriptedModel([text("ok")])
    async with scripted_harness(model, plugins=[On(steer_on_prompt)]) as h:
        handle.append(agent := await h.agents.create("a", options=MODEL))
        with anyio.fail_after(5):
            events = await run_turn(agent, "explain")
        assert shape(events) == [
            *start(1, "explain"),
            ("step/start", 1),
            ("steering/message", "and be brief"),
            ("assistant/message", "ok"),
            ("step/end", 1),
            *end(1),
        ]
        assert said(model.requests[0].messages) == [("user", "explain"), ("user", "and be brief")]


def steer_as_turn_one_ends(agent: list[Any], prompt: str) -> On:
    """An observer that steers ``prompt`` while turn/end of turn 1 is logged: too late."""

    def steer(event: SessionEvent) -> None:
        if event.type == "turn/end" and event.data["turn"] == 1:
            agent[0].steer(prompt)

    return On(steer)


async def test_b06_steering_after_the_last_step_becomes_the_next_turns_prompt() -> None:
    handle: list[Any] = []
    model = ScriptedModel([text("one"), text("two")])
    async with scripted_harness(model, plugins=[steer_as_turn_one_ends(handle, "late")]) as h:
        handle.append(agent := await h.agents.create("a", options=MODEL))
        with anyio.fail_after(5):
            await run_turn(agent, "first")
        assert shape(agent.session.events) == [
            *simple_turn(1, "first", "one"),
            *simple_turn(2, "late", "two"),
        ]
        assert said(model.requests[1].messages)[-1] == ("user", "late")


async def test_b06_steering_during_the_final_continuation_is_requeued() -> None:
    handle: list[Any] = []

    class SteerAtTheEnd:
        @hookimpl
        def agent_turn_continuation(self, turn: int) -> None:
            if turn == 1:
                handle[0].steer("one more thing")

    model = ScriptedModel([text("one"), text("two")])
    async with scripted_harness(model, plugins=[SteerAtTheEnd()]) as h:
        handle.append(agent := await h.agents.create("a", options=MODEL))
        with anyio.fail_after(5):
            await run_turn(agent, "first")
        expected = [*simple_turn(1, "first", "one"), *simple_turn(2, "one more thing", "two")]
        assert shape(agent.session.events) == expected


class StopsTurnOne:
    @hookimpl
    def agent_turn_continuation(self, turn: int) -> ContinuationDecision | None:
        return ContinuationDecision(action="stop") if turn == 1 else None


@pytest.mark.parametrize(
    ("plugins", "options", "reason"),
    [([StopsTurnOne()], {}, "completed"), ([], {"max_steps": 1}, "error")],
    ids=["a plugin stops the turn", "the step limit ends it"],
)
async def test_b06_steering_in_the_turns_last_step_becomes_the_next_turns_prompt(
    plugins: list[object], options: dict[str, Any], reason: str
) -> None:
    handle: list[Any] = []
    model = ScriptedModel([steering(handle, "also this", then="one"), text("two")])
    async with scripted_harness(model, plugins=plugins) as h:
        handle.append(agent := await h.agents.create("a", options={**MODEL, **options}))
        with anyio.fail_after(5):
            await run_turn(agent, "first")
            await agent.when_idle()
        assert of_type(agent.session.events, "steering/message") == []
        ends = [
            (e.data["turn"], e.data["reason"]) for e in of_type(agent.session.events, "turn/end")
        ]
        assert ends == [(1, reason), (2, "completed")]
        assert said(model.requests[1].messages)[-1] == ("user", "also this")


async def test_b06_late_steering_is_the_next_turn_also_one_at_a_time() -> None:
    handle: list[Any] = []
    model = ScriptedModel([sending(handle, "queued", then="one"), "two", "three"])
    async with scripted_harness(model, plugins=[steer_as_turn_one_ends(handle, "late")]) as h:
        options = {**MODEL, "queue_mode": "one-at-a-time"}
        handle.append(agent := await h.agents.create("a", options=options))
        with anyio.fail_after(5):
            await run_turn(agent, "first")
        assert shape(agent.session.events) == [
            *simple_turn(1, "first", "one"),
            *simple_turn(2, "late", "two"),
            *simple_turn(3, "queued", "three"),
        ]


async def test_b06_steering_left_by_a_failed_turn_is_not_dropped() -> None:
    handle: list[Any] = []
    model = ScriptedModel([steering(handle, "still here", then=fail("SERVER", "down")), "ok"])
    async with scripted_harness(model) as h:
        handle.append(agent := await h.agents.create("a", options=MODEL))
        with anyio.fail_after(5):
            await run_turn(agent, "first")
        expected = [*start(1, "first"), *FAILED_STEP, *end(1, "error")]
        assert shape(agent.session.events) == [*expected, *simple_turn(2, "still here", "ok")]


async def test_b07_send_and_steer_on_a_disposed_agent_raise() -> None:
    async with scripted_harness(ScriptedModel()) as h:
        agent = await h.agents.create("gone", options=MODEL)
        await agent.dispose()
        with pytest.raises(DshError, match=r"'gone'.*disposed"):
            agent.send("hello?")
        with pytest.raises(DshError, match=r"'gone'.*disposed"):
            agent.steer("hello?")
        kept = await h.agents.create("kept", options=MODEL)
    with pytest.raises(DshError, match=r"'kept'.*disposed"):  # the harness disposed it
        kept.send("hello?")
    assert list(agent.session.events) == list(kept.session.events) == []


async def test_b07_prompts_must_be_str_and_a_disposing_agent_takes_no_steering() -> None:
    seen = Seen()
    model = ScriptedModel([hang("partial")])
    async with scripted_harness(model, plugins=[seen]) as h:
        agent = await h.agents.create("going", options=MODEL)
        with pytest.raises(TypeError, match="must be a str, not int"):
            agent.send(123)  # type: ignore[arg-type]
        agent.send("go")
        with anyio.fail_after(5):
            await seen["assistant/chunk"].wait()
        with pytest.raises(TypeError, match="must be a str, not bytes"):
            agent.steer(b"bytes")  # type: ignore[arg-type]
        agent.agent.begin_stop()  # disposing: the turn has not ended yet
        with pytest.raises(AgentDisposedError, match=r"'going'.*disposed"):
            agent.steer("too late")
        with anyio.fail_after(5):
            await agent.dispose()
        events = agent.session.events
        assert contents(events, "user/message") == ["go"]
        assert contents(events, "steering/message") == []
