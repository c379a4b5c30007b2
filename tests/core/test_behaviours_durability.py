"""Conformance: behaviours 34-43 (containment and durability; persistence and resume).

Each test names the numbered behaviour of shared/design/BEHAVIOURS.md it checks.
Persistence is ``InMemoryPersistence`` from ``dsh.testing``; what a file backend does
on load (repairing a torn log, refusing a newer format) belongs to the persistence
plugin and is tested there. Here: what the core owns of 41 and 43.
"""

from __future__ import annotations

import datetime
import logging
import math
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from loop_support import LIMIT, Seen, Tools, agent_on, ends, types

from dsh import DshError, EventDataError, HookError, UserMessage, hookimpl
from dsh.agent import AgentHandle
from dsh.llm.base import TextDelta
from dsh.session import Session, SessionEvent
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


def ok(request: Any) -> str:
    return "ok"


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


CALL_ADD = tool_calls(("add", {"a": 1, "b": 2}))

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


class HoldsFirstChunk:
    """While the first chunk is being notified, signals and waits for ``release``."""

    def __init__(self) -> None:
        self.holding = anyio.Event()
        self.release = anyio.Event()

    @hookimpl
    async def session_event(self, event: SessionEvent) -> None:
        if event.type == "assistant/chunk" and not self.holding.is_set():
            self.holding.set()
            await self.release.wait()


async def abort_while_first_chunk_is_notified(*plugins: tuple[str, object]) -> AgentHandle:
    """Run a turn whose step is aborted while an observer awaits the first chunk."""
    holds = HoldsFirstChunk()
    model = ScriptedModel([hang("a", "b")])
    # registered last, ``holds`` is notified first
    async with agent_on(model, *plugins, ("holds", holds)) as (_, agent):
        agent.send("go")
        with anyio.fail_after(LIMIT):
            await holds.holding.wait()
            agent.abort()
            holds.release.set()
            await agent.when_idle()
            await agent.dispose()
    return agent


async def test_b37_an_abort_during_a_notification_hides_the_event_from_no_observer() -> None:
    recorder = EventRecorder()
    agent = await abort_while_first_chunk_is_notified(("recorder", recorder))

    events = agent.session.events
    assert ends(events) == [(1, "aborted")]
    assert [e.seq for _, e in recorder.events] == [e.seq for e in events]


# -- 38: data that is not lossless JSON is refused -------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        (1, 2),
        math.nan,
        math.inf,
        {1: "int key"},
        {"a", "set"},
        b"bytes",
        datetime.datetime(2024, 1, 1),
        object(),
        {"nested": [1, {"deep": (2,)}]},
    ],
    ids=["tuple", "nan", "inf", "int-key", "set", "bytes", "datetime", "object", "nested"],
)
def test_b38_session_append_refuses_data_that_is_not_lossless_json(value: Any) -> None:
    session = Session("s")
    session.append("note/ok", {"n": 1})

    with pytest.raises(EventDataError):
        session.append("note/bad", {"value": value})

    assert len(session.events) == 1
    assert session.append("note/ok", {"n": 2}).seq == 1


async def test_b38_a_plugin_event_with_bad_data_never_reaches_log_or_observers() -> None:
    recorder = EventRecorder()

    class Annotator:
        @hookimpl
        async def agent_step_result(self, agent: Any) -> None:
            await agent.session.emit("note/when", {"at": math.nan})

    model = ScriptedModel([text("hi"), text("again")])
    async with agent_on(model, ("recorder", recorder), ("annotator", Annotator())) as (
        _,
        agent,
    ):
        with anyio.fail_after(LIMIT):
            events = await run_turn(agent, "hi")

        assert "note/when" not in [e.type for e in agent.session.events]
        assert "note/when" not in recorder.types()
        (end,) = [e.data for e in events if e.type == "turn/end"]
        assert end["reason"] == "error" and end["error"]["plugin"] == "annotator"
        assert check_invariants(agent.session.events) == []


# -- 39: every produced log passes the checker -------------------------------------------------


async def busy_session(agent: AgentHandle, model: ScriptedModel) -> None:
    """Turns with tool calls (good, bad JSON, unknown tool), steering, a max-tokens cut,
    a provider error, an empty answer and an abort."""
    hanging = anyio.Event()

    def answer_and_get_steered(request: Any) -> str:
        agent.steer("and in words?")
        return "three"

    def hang_until_aborted(request: Any) -> Any:
        hanging.set()
        return hang("thinking")

    model.extend(
        tool_calls(("add", {"a": 1, "b": 2}), ("add", "{not json"), ("nope", {})),
        answer_and_get_steered,
        text("three, in words"),
        max_tokens("cut off", ("add", {"a": 1, "b": 1})),
        fail("SERVER", "upstream down"),
        tool_calls(("add", {"a": 2, "b": 2})),
        text(""),
        hang_until_aborted,
    )
    with anyio.fail_after(LIMIT):
        await run_turn(agent, "what is 1+2?")
        await run_turn(agent, "and 1+1?")
        await run_turn(agent, "try again")
        await run_turn(agent, "2+2?")
        agent.send("one more")
        await hanging.wait()
        agent.abort()
        await agent.when_idle()


async def test_b39_a_busy_log_passes_the_invariant_checker() -> None:
    model = ScriptedModel()
    async with agent_on(model) as (_, agent):
        await busy_session(agent, model)

        events = agent.session.events
        assert ends(events) == [
            (1, "completed"),
            (2, "max-tokens"),
            (3, "error"),
            (4, "completed"),
            (5, "aborted"),
        ]
        assert check_invariants(events) == []


def log_of(*entries: tuple[str, dict[str, Any]]) -> list[SessionEvent]:
    return [SessionEvent(kind, seq, 0.0, data) for seq, (kind, data) in enumerate(entries)]


T1, T2, T3 = ({"turn": n} for n in (1, 2, 3))
S1, S2 = ({"turn": 1, "step": n} for n in (1, 2))
END1 = {"turn": 1, "reason": "completed"}
CALL = {"id": "c1", "name": "add", "arguments": "{}"}
RESULT = {"call_id": "c1", "name": "add", "content": "1", "is_error": False}

BROKEN_LOGS = {
    "turns not consecutive": log_of(
        ("turn/start", T1), ("turn/end", END1), ("turn/start", T3), ("turn/end", T3 | END1)
    ),
    "step not from 1": log_of(("turn/start", T1), ("step/start", S2)),
    "step event outside a step": log_of(("turn/start", T1), ("assistant/chunk", {})),
    "result before its call": log_of(
        ("turn/start", T1), ("step/start", S1), ("tool/result", RESULT), ("tool/call", CALL)
    ),
    "call without result at step end": log_of(
        ("turn/start", T1), ("step/start", S1), ("tool/call", CALL), ("step/end", S1)
    ),
    "turn ends with a step open": log_of(
        ("turn/start", T1), ("step/start", S1), ("turn/end", END1)
    ),
    "unknown end reason": log_of(("turn/start", T1), ("turn/end", {"turn": 1, "reason": "?"})),
    "user message outside a turn": log_of(("user/message", {"content": "hi"})),
    "turn opened twice": log_of(("turn/start", T1), ("turn/start", T2)),
}


@pytest.mark.parametrize("name", list(BROKEN_LOGS))
def test_b39_the_checker_catches_each_kind_of_violation(name: str) -> None:
    assert check_invariants(BROKEN_LOGS[name]) != []


def test_b39_the_checker_accepts_a_sound_log() -> None:
    sound = log_of(
        ("turn/start", T1),
        ("user/message", {"content": "hi"}),
        ("step/start", S1),
        ("tool/call", CALL),
        ("tool/result", RESULT),
        ("step/end", S1),
        ("turn/end", END1),
    )
    assert check_invariants(sound) == []
    assert check_invariants([e.to_dict() for e in sound]) == []


# -- 40: resume --------------------------------------------------------------------------------


async def test_b40_resume_without_a_persistence_backend_fails_clearly() -> None:
    model = ScriptedModel([text("unused")])
    async with scripted_harness(model, load_entry_points=False) as harness:
        with pytest.raises(DshError, match="persistence"):
            await harness.agents.resume("a", "some-session", options={"model": "scripted"})
        assert harness.agents.get("a") is None


async def test_b40_resume_of_a_session_that_is_not_stored_fails_clearly() -> None:
    model = ScriptedModel([text("unused")])
    async with agent_on(model, ("mem", InMemoryPersistence())) as (harness, _):
        with pytest.raises(DshError, match="not stored"):
            await harness.agents.resume("b", "no-such-session", options={"model": "scripted"})
        assert harness.agents.get("b") is None


async def test_b40_resume_continues_turn_numbers_history_and_seq() -> None:
    store, errors = InMemoryPersistence(), ErrorRecorder()
    first = ScriptedModel([CALL_ADD, text("3"), text("ok")])
    async with agent_on(first, ("mem", store)) as (_, agent):
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "1+2?")
            await run_turn(agent, "thanks")
        sid, history = agent.session.id, list(agent.session.history)
        logged = len(agent.session.events)
        with anyio.fail_after(LIMIT):
            await agent.dispose()

    second = ScriptedModel([text("you asked 1+2")])
    plugins = [("tools", Tools()), ("mem", store), ("errors", errors)]
    async with scripted_harness(second, plugins=plugins) as harness:
        resumed = await harness.agents.resume("a", sid, options={"model": "scripted"})
        assert resumed.session.id == sid
        assert len(resumed.session.events) == logged
        with anyio.fail_after(LIMIT):
            events = await run_turn(resumed, "what did I ask?")

        assert ends(events) == [(3, "completed")]
        assert [e.seq for e in resumed.session.events] == list(range(len(resumed.session.events)))
        assert events[0].seq == logged
        assert second.requests[0].messages == (
            *history,
            UserMessage(content="what did I ask?"),
        )
        assert check_invariants(resumed.session.events) == []
        assert errors.errors == []  # the store took the new events without a seq clash
        stored = store.stored[sid].events
        assert [e.seq for e in stored] == list(range(len(resumed.session.events)))


# -- 41: a log cut mid-turn (the core's part) -----------------------------------------------------


async def finished_log(store: InMemoryPersistence) -> tuple[str, list[SessionEvent]]:
    model = ScriptedModel([CALL_ADD, text("3"), text("bye")])
    async with agent_on(model, ("mem", store)) as (_, agent):
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "1+2?")
            await run_turn(agent, "bye")
        return agent.session.id, list(agent.session.events)


async def test_b41_the_checker_flags_a_log_cut_mid_turn() -> None:
    _, events = await finished_log(InMemoryPersistence())
    first_call = next(e.seq for e in events if e.type == "tool/call")
    second_turn = next(e.seq for e in events if e.data.get("turn") == 2)

    assert check_invariants(events[: first_call + 1]) != []  # a call with no result
    assert check_invariants(events[:second_turn]) == []  # cut between turns: sound
    assert check_invariants(events[: second_turn + 2]) != []  # turn 2 left open
    # a live log is legitimately open mid-turn; ``complete=False`` checks only the prefix
    assert check_invariants(events[: first_call + 1], complete=False) == []


async def test_b41_the_checker_reports_a_hole_in_the_log() -> None:
    _, events = await finished_log(InMemoryPersistence())
    holed = [e.to_dict() for e in events]
    del holed[3]

    assert any("seq" in problem for problem in check_invariants(holed))


async def test_b41_a_session_refuses_events_whose_seq_is_not_their_index() -> None:
    _, events = await finished_log(InMemoryPersistence())

    with pytest.raises(DshError, match="seq"):
        Session("holed", events[:3] + events[4:])
    with pytest.raises(DshError, match="seq"):
        Session("shifted", events[1:])


async def test_b41_resume_reports_a_hole_as_corruption_instead_of_repairing_it() -> None:
    store = InMemoryPersistence()
    sid, events = await finished_log(store)
    del store.stored[sid].events[3]

    model = ScriptedModel([text("unused")])
    async with agent_on(model, ("mem", store)) as (harness, _):
        with pytest.raises(DshError, match="seq"):
            await harness.agents.resume("b", sid, options={"model": "scripted"})
        assert harness.agents.get("b") is None
        assert harness.sessions.get(sid) is None
    assert len(store.stored[sid].events) == len(events) - 1  # left as found


# -- 42: replay reproduces the derived history ----------------------------------------------------


async def test_b42_replaying_the_stored_log_gives_the_live_history() -> None:
    store = InMemoryPersistence()
    model = ScriptedModel()
    async with agent_on(model, ("mem", store)) as (_, agent):
        await busy_session(agent, model)
        sid, live = agent.session.id, list(agent.session.history)
        with anyio.fail_after(LIMIT):
            await agent.dispose()

    loaded = await store.load(sid)
    assert loaded is not None
    assert list(Session("replay", loaded.events).history) == live

    nxt = ScriptedModel([text("resumed")])
    async with scripted_harness(nxt, plugins=[("tools", Tools()), ("mem", store)]) as harness:
        resumed = await harness.agents.resume("a", sid, options={"model": "scripted"})
        assert list(resumed.session.history) == live
        with anyio.fail_after(LIMIT):
            await run_turn(resumed, "still there?")
        assert nxt.requests[0].messages == (*live, UserMessage(content="still there?"))


async def test_b42_the_stored_log_equals_the_live_one_after_an_abort_mid_notification() -> None:
    store = InMemoryPersistence()
    agent = await abort_while_first_chunk_is_notified(("mem", store))
    sid, live = agent.session.id, list(agent.session.events)

    loaded = await store.load(sid)
    assert loaded is not None
    assert [e.to_dict() for e in loaded.events] == [e.to_dict() for e in live]


# -- 43: a newer session format --------------------------------------------------------------------


def test_b43_a_newer_format_is_refused_by_the_persistence_plugin() -> None:
    pytest.skip(
        "behaviour 43 belongs to the persistence plugin: the format version lives in its "
        "session file header (plugins/persistence, tests/plugins/persistence); the core's "
        "StoredSession and Session carry no format version to check"
    )
