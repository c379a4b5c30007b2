"""``dsh.testing``'s doubles: ``InMemoryPersistence`` as a store a resume can trust,
``EventRecorder`` and ``ErrorRecorder`` (from a hand mutation review of _doubles.py)."""

from __future__ import annotations

import pytest

from dsh.session import Session, SessionEvent
from dsh.testing import (
    ErrorRecorder,
    EventRecorder,
    InMemoryPersistence,
    ScriptedModel,
    fail,
    run_turn,
    scripted_harness,
)


def event(seq: int, time: float, type: str = "user/message") -> SessionEvent:
    data = {"content": f"event {seq}"} if type == "user/message" else {"turn": 1}
    return SessionEvent(type, seq, time, data)


def log(count: int, session_id: str = "s", start: float = 100.0) -> Session:
    """A session of ``count`` events one second apart (times never collide)."""
    events = [event(seq, start + seq) for seq in range(count)]
    return Session(session_id, events, created=50.0, meta={"agent": "a"})


def contents(store: InMemoryPersistence, session_id: str = "s") -> list[str]:
    return [e.data["content"] for e in store.stored[session_id].events]


def test_reading_stored_twice_does_not_repeat_the_last_flush() -> None:
    store = InMemoryPersistence()
    store.session_flush(log(2))
    assert contents(store) == ["event 0", "event 1"]
    assert contents(store) == ["event 0", "event 1"]


def test_a_flush_after_a_read_keeps_what_was_read() -> None:
    store, session = InMemoryPersistence(), log(2)
    store.session_flush(session)
    assert len(store.stored["s"].events) == 2
    session._append("user/message", {"content": "event 2"})  # one event: still stored
    store.session_flush(session)
    assert contents(store) == ["event 0", "event 1", "event 2"]
    assert store.flushes == 2


def test_a_failing_flush_raises_the_error_set_and_stores_nothing() -> None:
    store = InMemoryPersistence()
    store.fail_flush = OSError("disk full")
    with pytest.raises(OSError, match="disk full"):
        store.session_flush(log(2))
    assert (store.stored, store.flushes) == ({}, 0)
    store.fail_flush = None
    store.session_flush(log(2))
    assert store.flushes == 1


def test_the_stored_session_keeps_the_creation_time_and_a_copy_of_the_meta() -> None:
    store, session = InMemoryPersistence(), log(1)
    store.session_flush(session)
    session.meta["agent"] = "changed later"
    stored = store.stored["s"]
    assert (stored.id, stored.created, stored.meta) == ("s", 50.0, {"agent": "a"})


def test_a_resumed_session_flushed_with_nothing_new_is_accepted() -> None:
    store = InMemoryPersistence()
    store.session_flush(log(3))
    resumed = Session("s", store.stored["s"].events)
    store.session_flush(resumed)
    resumed._append("user/message", {"content": "event 3"})
    store.session_flush(resumed)
    assert contents(store) == [f"event {n}" for n in range(4)]


def test_a_new_session_shorter_than_the_stored_log_is_refused_by_name() -> None:
    store = InMemoryPersistence()
    store.session_flush(log(3))
    with pytest.raises(RuntimeError, match="'s': its log does not continue the 3 stored"):
        store.session_flush(log(2))
    with pytest.raises(RuntimeError, match="does not continue the 3 stored events"):
        store.session_flush(log(3, start=200.0))  # as long, but another log
    store.session_flush(log(4))  # the same first three events: it continues them
    assert len(store.stored["s"].events) == 4


async def test_list_gives_turns_and_the_time_of_the_last_event() -> None:
    store = InMemoryPersistence()
    turns = [event(0, 10.0, "turn/start"), event(1, 11.0), event(2, 12.0, "turn/start")]
    store.session_flush(Session("t", [*turns, event(3, 13.0)], created=5.0))
    store.session_flush(Session("empty", created=7.0))
    headers = {h.id: h for h in await store.list()}
    assert (headers["t"].created, headers["t"].updated, headers["t"].turns) == (5.0, 13.0, 2)
    assert (headers["empty"].updated, headers["empty"].turns) == (7.0, 0)


async def test_load_returns_a_copy_that_changes_nothing_stored() -> None:
    store = InMemoryPersistence()
    store.session_flush(log(2))
    loaded = await store.load("s")
    assert loaded is not None and [e.data["content"] for e in loaded.events] == contents(store)
    loaded.events[0].data["content"] = "edited"
    loaded.events.pop()
    loaded.meta["agent"] = "edited"
    again = await store.load("s")
    assert again is not None and [e.data["content"] for e in again.events] == [
        "event 0",
        "event 1",
    ]
    assert (again.meta, again.created) == ({"agent": "a"}, 50.0)
    assert await store.load("missing") is None


async def test_delete_forgets_the_session_so_its_id_can_be_used_again() -> None:
    store = InMemoryPersistence()
    store.session_flush(log(3))
    assert await store.delete("s") is True
    assert await store.delete("s") is False
    store.session_flush(log(1, start=500.0))  # a new log under the deleted id
    assert contents(store) == ["event 0"]


async def test_recorders_record_every_event_and_every_error_in_order() -> None:
    events, errors, store = EventRecorder(), ErrorRecorder(), InMemoryPersistence()
    model = ScriptedModel(["one", "two"])
    plugins = [("events", events), ("errors", errors), ("mem", store)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        first = await h.agents.create("a", options={"model": "scripted"})
        second = await h.agents.create("b", options={"model": "scripted"})
        await run_turn(first, "hi")
        await run_turn(second, "hi")
        store.fail_flush = OSError("first")
        await first.dispose()
        store.fail_flush = OSError("second")
        await second.dispose()
    for agent in (first, second):
        mine = [e.type for sid, e in events.events if sid == agent.session.id]
        assert mine == [e.type for e in agent.session.events]
        assert events.types(agent.session.id) == mine
    assert events.types() == [e.type for _, e in events.events]
    assert events.types("no-such-session") == []
    assert [str(error).rsplit(": ", 1)[-1] for error in errors.errors][:2] == ["first", "second"]


async def test_a_failed_model_call_is_in_the_log_not_an_agent_error() -> None:
    errors = ErrorRecorder()
    model = ScriptedModel([fail("AUTH", "no key")])
    async with scripted_harness(model, plugins=[errors], load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "hi")
    assert events[-1].data["reason"] == "error" and errors.errors == []
