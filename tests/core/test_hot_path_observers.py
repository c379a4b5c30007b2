"""The loop's hot-path shortcuts for observers: sessions call the ``session_event`` hook
only while some plugin implements it, sync observers are called directly with the
arguments they name, and a stopped harness stops following registrations.
"""

from __future__ import annotations

from typing import Any

from dsh import create_plugin_manager, hookimpl
from dsh.harness import Harness
from dsh.testing import EventRecorder, ScriptedModel, run_turn, scripted_harness, text


class _Observer:
    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl
    def session_event(self, event: Any) -> None:
        self.seen.append(event.type)


async def test_sessions_call_session_event_only_while_a_plugin_implements_it() -> None:
    async with scripted_harness(
        ScriptedModel([text("one"), text("two"), text("three")]), load_entry_points=False
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        assert agent.session.observer is None
        await run_turn(agent, "one")
        observer = _Observer()
        harness.pm.register(observer, "late-observer")
        assert agent.session.observer is not None
        await run_turn(agent, "two")
        assert observer.seen[0] == "turn/start" and observer.seen[-1] == "turn/end"
        seen = len(observer.seen)
        harness.pm.unregister(observer)
        assert agent.session.observer is None
        await run_turn(agent, "three")
        assert len(observer.seen) == seen


class _Shapes:
    """session_event impls taking each shape of arguments; one raises."""

    def __init__(self) -> None:
        self.got: list[tuple[str, object]] = []

    @hookimpl
    def session_event(self, event: Any, session: Any) -> None:
        self.got.append(("event, session", (event.type, session.id)))


class _OnlySession:
    def __init__(self, got: list[tuple[str, object]]) -> None:
        self.got = got

    @hookimpl
    def session_event(self, session: Any) -> None:
        self.got.append(("session", session.id))


class _Nothing:
    def __init__(self, got: list[tuple[str, object]]) -> None:
        self.got = got

    @hookimpl
    def session_event(self) -> None:
        self.got.append(("nothing", None))
        raise RuntimeError("observer down")


async def test_sync_observers_are_called_directly_with_the_arguments_they_name() -> None:
    shapes = _Shapes()
    errors: list[Any] = []
    async with scripted_harness(ScriptedModel([text("hi")]), load_entry_points=False) as harness:
        harness.pm.dispatcher.report = errors.append
        for name, plugin in (
            ("shapes", shapes),
            ("only-session", _OnlySession(shapes.got)),
            ("nothing", _Nothing(shapes.got)),
        ):
            harness.pm.register(plugin, name)
        session = harness.sessions.prepare("s")
        harness.sessions.enter(session)
        assert session.observer != harness.relay.observe_event  # direct calls, no dispatch
        pending = session.emit("note/x", {})
        assert len(shapes.got) == 3  # told as it was logged: the await has nothing to do
        await pending

    # LIFO: the last registered runs first; a raising observer stops nobody
    assert shapes.got == [("nothing", None), ("session", "s"), ("event, session", ("note/x", "s"))]
    assert [(e.plugin, e.hook) for e in errors] == [("nothing", "session_event")]


async def test_a_recorder_registered_before_start_sees_every_event() -> None:
    recorder = EventRecorder()
    async with scripted_harness(
        ScriptedModel([text("hi")]), plugins=[("rec", recorder)], load_entry_points=False
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "hi")
        assert [e.seq for _, e in recorder.events] == list(range(len(agent.session.events)))


async def test_a_stopped_harness_stops_following_registrations() -> None:
    pm = create_plugin_manager(load_entry_points=False)
    for _ in range(3):
        async with Harness(pm=pm):
            assert len(pm.dispatcher.listeners) == 2  # the observers; late plugins
    assert pm.dispatcher.listeners == []
