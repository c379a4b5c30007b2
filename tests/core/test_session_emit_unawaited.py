"""``session.emit`` from a plain ``def`` hook impl, which cannot await what it returns:
the event is logged, but async ``session_event`` observers never see it. That was said
only by Python's "coroutine 'Dispatcher._notify' was never awaited", naming dsh's
internals; now a warning (and a logged error) names the event and what to do."""

from __future__ import annotations

import gc
from typing import Any

import anyio
import pytest

from dsh import hookimpl
from dsh.session import EmitNotAwaitedWarning
from dsh.testing import ScriptedModel, run_turn, scripted_harness


class AsyncObserver:
    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl
    async def session_event(self, event: Any) -> None:
        await anyio.lowlevel.checkpoint()
        self.seen.append(event.type)


class PlainEmitter:
    @hookimpl
    def agent_request(self, agent: Any, request: Any) -> None:
        agent.session.emit("stamp/seen", {"by": "plain"})


class AsyncEmitter:
    @hookimpl
    async def agent_request(self, agent: Any, request: Any) -> None:
        await agent.session.emit("stamp/seen", {"by": "async"})


async def test_an_emit_a_plain_impl_drops_is_said_naming_the_event() -> None:
    observer = AsyncObserver()
    plugins = [("stamp", PlainEmitter()), ("watch", observer)]
    async with scripted_harness(ScriptedModel(["ok"]), plugins=plugins) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        with pytest.warns(EmitNotAwaitedWarning) as caught:  # dropped: said at once
            events = await run_turn(agent, "go")
    seq = next(e.seq for e in events if e.type == "stamp/seen")
    assert str(caught[0].message) == (
        f"session.emit('stamp/seen') (event seq {seq}) was not awaited: the event is "
        "logged, but the async session_event observers never saw it; await what emit "
        "returns (in an async def impl)"
    )
    assert "stamp/seen" not in observer.seen and "turn/end" in observer.seen


async def test_an_awaited_emit_reaches_async_observers_without_a_warning(
    recwarn: pytest.WarningsRecorder,
) -> None:
    observer = AsyncObserver()
    plugins = [("stamp", AsyncEmitter()), ("watch", observer)]
    async with scripted_harness(ScriptedModel(["ok"]), plugins=plugins) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "go")
        gc.collect()
    assert "stamp/seen" in observer.seen
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


async def test_an_emit_dropped_with_no_async_observer_warns_too() -> None:
    """With only sync observers (dsh's own are all sync) a dropped emit harmed nothing
    yet, and used to pass silently: the plugin's tests never showed the mistake that a
    user's async observer would then meet."""
    plugins = [("stamp", PlainEmitter())]
    async with scripted_harness(ScriptedModel(["ok"]), plugins=plugins) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        with pytest.warns(EmitNotAwaitedWarning) as caught:
            events = await run_turn(agent, "go")
    seq = next(e.seq for e in events if e.type == "stamp/seen")
    assert str(caught[0].message) == (
        f"session.emit('stamp/seen') (event seq {seq}) was not awaited: the event is "
        "logged, but an async session_event observer, once one is installed, will never "
        "see it; await what emit returns (in an async def impl)"
    )
