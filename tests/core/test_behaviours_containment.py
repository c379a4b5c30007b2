"""Conformance: behaviours 34-37 (containment: a raising interception hook ends only its
turn, every exit path closes the turn, flushes, failing observers).

Each test names the numbered behaviour of shared/design/BEHAVIOURS.md it checks.
Persistence is ``InMemoryPersistence`` from ``dsh.testing``; what a file backend does
on load (repairing a torn log, refusing a newer format) belongs to the persistence
plugin and is tested there. Here: what the core owns of 41 and 43.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from behaviours_durability_support import CALL_ADD, abort_while_first_chunk_is_notified, ok
from loop_support import LIMIT, Seen, Tools, agent_on, ends, types

from dsh import HookError, hookimpl
from dsh.llm.base import TextDelta
from dsh.session import SessionEvent
from dsh.testing import (
    ErrorRecorder,
    EventRecorder,
    InMemoryPersistence,
    ScriptedModel,
    check_invariants,
    fail,
    hang,
    max_tokens,
    run_turn,
    scripted_harness,
    text,
    tool_calls,
)

# -- 34: a raising interception hook ends only the current turn --------------------------


class FailsInRequest:
    @hookimpl
    def agent_request(self, turn: int) -> None:
        if turn == 1:
            raise RuntimeError("broken plugin")


class FailsInStepResult:
    @hookimpl
    async def agent_step_result(self, turn: int) -> None:
        if turn == 1:
            raise RuntimeError("broken plugin")


class FailsInContinuation:
    @hookimpl
    def agent_turn_continuation(self, turn: int) -> None:
        if turn == 1:
            raise RuntimeError("broken plugin")


class RequestAsDict:  # plain data where the hooks expect dsh's models (a plugin bug)
    @hookimpl
    def agent_request(self, turn: int) -> object:
        return {"model": "scripted"} if turn == 1 else None


class MessageAsDict:
    @hookimpl
    def agent_step_result(self, turn: int) -> object:
        return {"role": "assistant"} if turn == 1 else None


class DecisionAsStr:
    @hookimpl
    def agent_turn_continuation(self, turn: int) -> object:
        return "stop" if turn == 1 else None


@pytest.mark.parametrize(
    ("hook", "plugin", "said"),
    [
        ("agent_request", FailsInRequest(), "broken plugin"),
        ("agent_step_result", FailsInStepResult(), "broken plugin"),
        ("agent_turn_continuation", FailsInContinuation(), "broken plugin"),
        ("agent_request", RequestAsDict(), "dict where ModelRequest"),
        ("agent_step_result", MessageAsDict(), "dict where AssistantMessage"),
        ("agent_turn_continuation", DecisionAsStr(), "str where ContinuationDecision"),
    ],
)
async def test_b34_a_raising_interception_hook_ends_only_the_current_turn(
    hook: str, plugin: object, said: str
) -> None:
    model = ScriptedModel([ok] * 3)
    async with agent_on(model, ("flaky", plugin)) as (_, agent):
        with anyio.fail_after(LIMIT):
            first = await run_turn(agent, "one")
            second = await run_turn(agent, "two")

        (end,) = [e.data for e in first if e.type == "turn/end"]
        assert end["reason"] == "error"
        assert end["error"]["plugin"] == "flaky"
        assert end["error"]["hook"] == hook
        assert said in end["error"]["message"]
        assert ends(second) == [(2, "completed")]
        assert check_invariants(agent.session.events) == []


# -- 35: turn/start is always answered by turn/end ---------------------------------------------


class BreaksMidStream(ScriptedModel):
    """Streams half an answer, then the connection drops."""

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        self.requests.append(request)
        yield TextDelta("half an ans")
        raise ConnectionResetError("peer went away")


class NotAMessage:
    @hookimpl
    def agent_step_result(self) -> str:
        return "this is not an AssistantMessage"


# name: (script, plugins, options, what to do once the step is under way, end reason)
EXITS: dict[str, tuple[list[Any], list[tuple[str, object]], dict[str, Any], str, str]] = {
    "completed": ([CALL_ADD, text("3")], [], {}, "", "completed"),
    "max tokens": ([max_tokens("cut", ("add", {"a": 1, "b": 2}))], [], {}, "", "max-tokens"),
    "provider error": ([fail("RATE_LIMIT", "slow down")], [], {}, "", "error"),
    "hook raises, step open": ([CALL_ADD], [("f", FailsInContinuation())], {}, "", "error"),
    "internal error": ([text("hi")], [("bad", NotAMessage())], {}, "", "error"),
    "step limit": ([CALL_ADD, CALL_ADD], [], {"max_steps": 1}, "", "error"),
    "abort while streaming": ([hang("x")], [], {}, "abort", "aborted"),
    "abort during a tool": ([tool_calls(("block", {}), ("add", {}))], [], {}, "abort", "aborted"),
    "cancel": ([hang("x")], [], {}, "cancel", "aborted"),
    "dispose": ([hang("x")], [], {}, "dispose", "disposed"),
}


@pytest.mark.parametrize("name", list(EXITS))
async def test_b35_every_exit_path_logs_turn_end_after_step_end(name: str) -> None:
    script, plugins, options, interrupt, reason = EXITS[name]
    tools, seen = Tools(), Seen()
    model = ScriptedModel(script)
    all_plugins = [("tools", tools), ("seen", seen), *plugins]
    async with scripted_harness(model, plugins=all_plugins) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted", **options})
        session = agent.session
        agent.send("go")
        with anyio.fail_after(LIMIT):
            if interrupt:
                started = tools.started if "tool" in name else seen["assistant/chunk"]
                await started.wait()
                if interrupt == "dispose":
                    await agent.dispose()
                else:
                    getattr(agent, interrupt)()
            await agent.when_idle()

        logged = types(session.events)
        assert ends(session.events) == [(1, reason)]
        assert logged.count("turn/start") == logged.count("turn/end") == 1
        assert logged[-1] == "turn/end"
        assert logged.count("step/start") == logged.count("step/end")
        assert logged[-2] == "step/end"
        assert check_invariants(session.events) == []


async def test_b35_a_stream_that_breaks_midway_still_closes_the_turn() -> None:
    model = BreaksMidStream()
    async with agent_on(model) as (_, agent):
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "go")

        assert types(events)[-2:] == ["step/end", "turn/end"]
        assert ends(events) == [(1, "error")]
        assert check_invariants(agent.session.events) == []


# -- 36: session_flush after every turn/end ------------------------------------------------------


class FlushOrder:
    """Logs turn boundaries and the start and end of every (slow, async) flush."""

    def __init__(self) -> None:
        self.log: list[str] = []

    @hookimpl
    def session_event(self, event: SessionEvent) -> None:
        if event.type in ("turn/start", "turn/end"):
            self.log.append(event.type)

    @hookimpl
    async def session_flush(self) -> None:
        self.log.append("flush")
        for _ in range(3):
            await anyio.lowlevel.checkpoint()
        self.log.append("flushed")


async def test_b36_session_flush_is_awaited_after_every_turn_end() -> None:
    order = FlushOrder()
    model = ScriptedModel([text("one"), fail("SERVER", "down"), text("three")])
    async with agent_on(model, ("order", order), queue_mode="one-at-a-time") as (_, agent):
        for prompt in ("a", "b", "c"):  # queued together: the loop runs them back to back
            agent.send(prompt)
        with anyio.fail_after(LIMIT):
            await agent.when_idle()

        assert ends(agent.session.events) == [(1, "completed"), (2, "error"), (3, "completed")]
        assert order.log == ["turn/start", "turn/end", "flush", "flushed"] * 3


async def test_b36_a_failing_flush_is_reported_and_the_agent_keeps_serving(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store, errors = InMemoryPersistence(), ErrorRecorder()
    store.fail_flush = RuntimeError("disk full")
    model = ScriptedModel([text("one"), text("two")])
    async with agent_on(model, ("mem", store), ("errors", errors)) as (_, agent):
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "one")

        assert agent.session.events[-1].type == "turn/end"  # nothing logged after it
        assert len(errors.errors) == 1
        error = errors.errors[0]
        assert "disk full" in str(error)
        assert isinstance(error, HookError) and error.plugin == "mem"
        assert any(
            r.levelno >= logging.ERROR and "disk full" in r.getMessage() for r in caplog.records
        )

        store.fail_flush = None
        with anyio.fail_after(LIMIT):
            second = await run_turn(agent, "two")
        assert ends(second) == [(2, "completed")]
        stored = store.stored[agent.session.id].events
        assert [e.to_dict() for e in stored] == [e.to_dict() for e in agent.session.events]


async def test_b36_a_failing_flush_at_dispose_does_not_stop_the_teardown() -> None:
    store, errors = InMemoryPersistence(), ErrorRecorder()
    model = ScriptedModel([text("one")])
    async with agent_on(model, ("mem", store), ("errors", errors)) as (harness, agent):
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "one")
            store.fail_flush = RuntimeError("disk full")
            await agent.dispose()

        assert [str(e) for e in errors.errors if "disk full" in str(e)] != []
        assert harness.agents.get("a") is None


# -- 37: a failing session_event observer ---------------------------------------------------------


class BrokenObserver:
    @hookimpl
    def session_event(self) -> None:
        raise RuntimeError("observer broke")


async def test_b37_a_failing_observer_is_reported_and_stops_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    recorder = EventRecorder()
    model = ScriptedModel([CALL_ADD, text("3"), text("again")])
    # registered last, the broken observer is called first for every event
    async with agent_on(model, ("recorder", recorder), ("broken", BrokenObserver())) as (
        _,
        agent,
    ):
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "1+2?")
            second = await run_turn(agent, "again")

        events = agent.session.events
        assert ends(events) == [(1, "completed"), (2, "completed")]
        assert [e.seq for _, e in recorder.events] == list(range(len(events)))
        assert ends(second) == [(2, "completed")]
        reports = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
        assert any("broken" in m and "session_event" in m for m in reports)
        assert any("observer broke" in m for m in reports)


async def test_b37_an_abort_during_a_notification_hides_the_event_from_no_observer() -> None:
    recorder = EventRecorder()
    agent = await abort_while_first_chunk_is_notified(("recorder", recorder))

    events = agent.session.events
    assert ends(events) == [(1, "aborted")]
    assert [e.seq for _, e in recorder.events] == [e.seq for e in events]
