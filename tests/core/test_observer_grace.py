"""An async ``session_event`` observer (or ``session_flush`` impl) that never returns,
once its agent is aborted, cancelled or disposed, or the harness leaves (docs/hooks.md,
"Observing: session_event"): it runs shielded, so an abort never tears a notification,
but only for ``dsh._grace.GRACE_SECONDS`` from then; it is then cancelled and reported
naming the plugin and the hook, and the turn ends as any aborted turn does: every
tool/call has its tool/result and the log passes the invariant checker. An observer
slower than the grace but finishing sees every event and is reported nowhere."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from loop_support import Tools, ends, types

import dsh._grace
from dsh import HookError, hookimpl
from dsh._grace import Grace
from dsh.agent import AgentHandle
from dsh.session import Session, SessionEvent
from dsh.testing import (
    ErrorRecorder,
    EventRecorder,
    ScriptedModel,
    check_invariants,
    hang,
    scripted_harness,
    text,
    tool_calls,
)

GRACE = 0.3
BOUND = GRACE + 3  # what a grace and a loaded machine's delays may take, not 5 s
#: "Never": longer than BOUND. Not sleep_forever(): a shielded wait is out of
#: fail_after's reach, so without the grace a test would hang; this way it fails.
NEVER = BOUND + 5


@pytest.fixture(autouse=True)
def short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dsh._grace, "GRACE_SECONDS", GRACE)


class Hangs:
    """An async observer that does not return (``NEVER``) from the first event that
    ``when`` holds for."""

    def __init__(self, when: Callable[[SessionEvent], bool]) -> None:
        self.when = when
        self.stuck = anyio.Event()

    @hookimpl
    async def session_event(self, event: SessionEvent) -> None:
        if not self.stuck.is_set() and self.when(event):
            self.stuck.set()
            await anyio.sleep(NEVER)


def of_type(kind: str) -> Callable[[SessionEvent], bool]:
    return lambda event: event.type == kind


def cut_short(errors: ErrorRecorder, plugin: str, hook: str) -> list[HookError]:
    return [e for e in errors.failures if (e.plugin, e.hook) == (plugin, hook)]


async def stop(how: str, agent: AgentHandle) -> None:
    if how == "abort":
        agent.abort()
    elif how == "cancel":
        agent.cancel()
    else:
        await agent.dispose()
    await agent.when_idle()


@pytest.mark.parametrize("how", ["abort", "cancel", "dispose", "harness exit"])
async def test_an_observer_that_never_returns_is_cancelled_after_the_grace(how: str) -> None:
    hangs, recorder, errors = Hangs(of_type("assistant/chunk")), EventRecorder(), ErrorRecorder()
    plugins = [("recorder", recorder), ("errors", errors), ("hangs", hangs)]
    model = ScriptedModel([hang("partial")])
    with anyio.fail_after(BOUND):
        async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            agent.send("go")
            await hangs.stuck.wait()
            if how != "harness exit":
                await stop(how, agent)
                assert ends(agent.session.events) == [
                    (1, "disposed" if how == "dispose" else "aborted")
                ]
    events = agent.session.events
    assert types(events)[-1] == "turn/end"
    assert check_invariants(events) == []
    assert [e.seq for _, e in recorder.events] == [e.seq for e in events]
    (error,) = cut_short(errors, "hangs", "session_event")
    assert isinstance(error.cause, TimeoutError)
    assert f"did not return within {GRACE:g} s of the" in str(error)


async def test_a_tool_call_notified_to_an_observer_that_never_returns_gets_its_result() -> None:
    hangs, errors = Hangs(of_type("tool/call")), ErrorRecorder()
    plugins = [("tools", Tools()), ("errors", errors), ("hangs", hangs)]
    model = ScriptedModel([tool_calls(("add", {"a": 1, "b": 2})), text("3")])
    with anyio.fail_after(BOUND):
        async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            agent.send("1+2?")
            await hangs.stuck.wait()
            await stop("cancel", agent)
    events = agent.session.events
    assert "tool/result" in types(events)
    assert check_invariants(events) == []
    assert len(cut_short(errors, "hangs", "session_event")) == 1


class Slow:
    """An async observer that takes ``delay`` seconds over each event; ``busy`` once it
    is over a chunk."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.seen: list[int] = []
        self.busy = anyio.Event()

    @hookimpl
    async def session_event(self, event: SessionEvent) -> None:
        if event.type == "assistant/chunk":
            self.busy.set()
        await anyio.sleep(self.delay)
        self.seen.append(event.seq)


async def test_a_slow_observer_within_the_grace_still_sees_every_event() -> None:
    slow, errors = Slow(GRACE / 4), ErrorRecorder()  # the closers take more than the grace
    model = ScriptedModel([hang("a", "b"), text("again")])
    with anyio.fail_after(BOUND + 5):
        async with scripted_harness(
            model, plugins=[("errors", errors), ("slow", slow)], load_entry_points=False
        ) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            agent.send("go")
            await slow.busy.wait()
            await stop("abort", agent)
            agent.send("again")  # a new turn: the abort's grace bounds nothing in it
            await agent.when_idle()
    events = agent.session.events
    assert ends(events) == [(1, "aborted"), (2, "completed")]
    assert slow.seen == [e.seq for e in events]
    assert errors.failures == []


class HangingFlush:
    def __init__(self) -> None:
        self.flushing = anyio.Event()

    @hookimpl
    async def session_flush(self, session: Session) -> None:
        self.flushing.set()
        await anyio.sleep(NEVER)


@pytest.mark.parametrize("how", ["abort", "cancel", "dispose"])
async def test_a_flush_that_never_returns_is_cancelled_after_the_grace(how: str) -> None:
    flush, errors = HangingFlush(), ErrorRecorder()
    model = ScriptedModel([text("one")])
    with anyio.fail_after(BOUND):
        async with scripted_harness(
            model, plugins=[("errors", errors), ("flush", flush)], load_entry_points=False
        ) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            agent.send("go")
            await flush.flushing.wait()
            await stop(how, agent)
    assert ends(agent.session.events) == [(1, "completed")]
    reported = [e for e in errors.errors if isinstance(e, HookError)]
    assert reported and reported[0].plugin == "flush" and reported[0].hook == "session_flush"
    assert "did not return within" in str(reported[0])


class FlushHangsOnceOn:
    """A flush that hangs (``NEVER``) while ``on`` is set; ``flushing``: one did."""

    def __init__(self) -> None:
        self.on = False
        self.flushing = anyio.Event()

    @hookimpl
    async def session_flush(self, session: Session) -> None:
        if self.on:
            self.flushing.set()
            await anyio.sleep(NEVER)


async def test_an_abort_during_a_hung_flush_bounds_it_and_the_queued_prompt_runs() -> None:
    """Was: ``abort()`` started a grace only while a turn ran, so once the turn had ended
    its flush could hang for ever: the agent stayed running, the queued prompt never
    ran and ``when_idle()`` never resolved (``cancel()`` bounded it)."""
    flush, errors = FlushHangsOnceOn(), ErrorRecorder()
    flush.on = True
    model = ScriptedModel([text("one"), text("two")])
    with anyio.fail_after(BOUND):
        async with scripted_harness(
            model, plugins=[("errors", errors), ("flush", flush)], load_entry_points=False
        ) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            agent.send("one")
            await flush.flushing.wait()  # turn 1 has ended; its flush hangs
            flush.on = False
            agent.send("two")
            agent.abort()
            await agent.when_idle()
            assert ends(agent.session.events) == [(1, "completed"), (2, "completed")]
            assert agent.status == "idle"
    (reported,) = [e for e in errors.errors if isinstance(e, HookError)]
    assert (reported.plugin, reported.hook) == ("flush", "session_flush")
    assert "of the abort; cancelled" in str(reported)


class SlowOnce:
    """A store slow once (twice the grace, not hung), then within it: what each completed
    flush made durable (the event count); ``flushing``: the slow one has begun."""

    def __init__(self) -> None:
        self.saved: list[int] = []
        self.flushing = anyio.Event()

    @hookimpl
    async def session_flush(self, session: Session) -> None:
        count = len(session.events)
        slow = not self.flushing.is_set()
        self.flushing.set()
        await anyio.sleep(2 * GRACE if slow else GRACE / 3)
        self.saved.append(count)


@pytest.mark.parametrize("how", ["abort", "cancel"])
async def test_a_flush_cut_by_an_abort_does_not_cut_the_disposal_flush(
    how: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Was: a flush cut short once marked its plugin's ``session_flush`` as hung, so the
    disposal flush, the last chance to save the turn, was "cancelled at once: it did
    not return from an earlier call". Each flush call has a grace of its own; once the
    disposal flush stored the turn, that is said (the turn was reported not saved)."""
    flush, errors = SlowOnce(), ErrorRecorder()
    with anyio.fail_after(BOUND + 2 * GRACE):
        async with scripted_harness(
            ScriptedModel([text("one")]),
            plugins=[("errors", errors), ("flush", flush)],
            load_entry_points=False,
        ) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            agent.send("one")
            await flush.flushing.wait()  # turn 1 has ended; its flush is slow
            getattr(agent, how)()
            await agent.when_idle()
            assert flush.saved == []  # cut after the grace
            await agent.dispose()
    assert flush.saved == [len(agent.session.events)]
    (reported,) = [e for e in errors.errors if isinstance(e, HookError)]
    assert f"of the {how}; cancelled" in str(reported)
    said = [r.getMessage() for r in caplog.records if "saved after all" in r.getMessage()]
    assert said == [
        f"agent 'a': session {agent.session.id} saved after all (turn 1, reported not "
        "saved, is stored now)"
    ]
    assert agent.agent.unsaved == {}


class HangsStopping:
    @hookimpl
    async def harness_stopping(self, harness: Any) -> None:
        await anyio.sleep(NEVER)


async def test_a_harness_stopping_observer_that_never_returns_ends_after_the_grace() -> None:
    errors = ErrorRecorder()
    plugins = [("errors", errors), ("stopping", HangsStopping())]
    with anyio.fail_after(BOUND):
        async with scripted_harness(ScriptedModel([]), plugins=plugins, load_entry_points=False):
            pass
    assert len(cut_short(errors, "stopping", "harness_stopping")) == 1


@pytest.mark.parametrize("how", ["abort", "cancel"])
async def test_an_idle_agent_s_abort_or_cancel_starts_no_grace(how: str) -> None:
    """Was (a cancel): it started the agent's grace, so a disposal later was reported
    as 'of the cancel', and a cancel outside any event loop raised NoEventLoopError."""
    flush, errors = FlushHangsOnceOn(), ErrorRecorder()
    with anyio.fail_after(BOUND):
        async with scripted_harness(
            ScriptedModel([text("one")]),
            plugins=[("errors", errors), ("flush", flush)],
            load_entry_points=False,
        ) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            await agent.prompt("one")
            getattr(agent, how)()  # idle, nothing queued: nothing happens
            flush.on = True
            await agent.dispose()
    (reported,) = [e for e in errors.errors if isinstance(e, HookError)]
    assert "of the disposal; cancelled" in str(reported)


def test_a_cancel_of_an_idle_agent_needs_no_event_loop() -> None:
    kept: list[Any] = []

    async def main() -> None:
        async with scripted_harness(ScriptedModel([]), load_entry_points=False) as h:
            kept.append(await h.agents.create("a", options={"model": "scripted"}))

    anyio.run(main)
    kept[0].cancel()  # a disposed handle's cancel: no loop, no error


def test_a_second_stop_needs_no_event_loop() -> None:
    """Once a grace has begun, another stop (an abort from a thread, a dispose) reads no
    clock: it raised NoEventLoopError outside a loop. With nothing in flight, what
    starts later is named after it."""
    grace = Grace()

    async def first() -> None:
        grace.start("abort")

    anyio.run(first)
    grace.start("disposal")
    assert grace.reason.endswith("of the disposal")
