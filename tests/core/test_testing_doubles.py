"""``dsh.testing.InMemoryPersistence``: a real store in memory, kept as JSON text."""

from __future__ import annotations

import pytest

from dsh import DshError
from dsh.persistence import StoredSession
from dsh.session import Session
from dsh.testing import InMemoryPersistence, ScriptedModel, run_turn, scripted_harness, text


def logged(session_id: str = "s", turns: int = 1) -> Session:
    session = Session(session_id)
    for turn in range(1, turns + 1):
        session._append("turn/start", {"turn": turn})
        session._append("user/message", {"content": f"prompt {turn}"})
        session._append("turn/end", {"turn": turn, "reason": "completed"})
    return session


def test_a_flush_stores_what_was_logged_since_the_last_one_as_copies() -> None:
    store, session = InMemoryPersistence(), logged()
    store.session_flush(session)
    session._append("turn/start", {"turn": 2})
    store.session_flush(session)

    stored = store.stored["s"].events
    assert [e.to_dict() for e in stored] == [e.to_dict() for e in session.events]
    assert store.flushes == 2
    session.events[1].data["content"] = "changed after the flush"
    assert store.stored["s"].events[1].data["content"] == "prompt 1"  # nothing is shared


def test_a_resumed_session_continues_the_stored_log() -> None:
    store, first = InMemoryPersistence(), logged()
    store.session_flush(first)
    resumed = Session("s", store.stored["s"].events)
    resumed._append("turn/start", {"turn": 2})
    store.session_flush(resumed)

    assert [e.seq for e in store.stored["s"].events] == list(range(4))


def test_a_session_flushed_before_it_logged_anything_can_be_continued() -> None:
    store = InMemoryPersistence()
    store.session_flush(Session("s"))  # an agent disposed before its first turn
    store.session_flush(logged())  # the same id, a new session object

    assert len(store.stored["s"].events) == 3


def test_a_new_session_under_a_stored_id_is_refused_not_mixed_in() -> None:
    store = InMemoryPersistence()
    store.session_flush(logged(turns=2))
    stranger = logged(turns=3)  # same id, its own log

    with pytest.raises(RuntimeError, match="does not continue the 6 stored events"):
        store.session_flush(stranger)
    assert len(store.stored["s"].events) == 6


async def test_creating_an_agent_on_a_stored_session_id_is_refused_as_it_is_created() -> None:
    # as dsh-persistence refuses it (SessionConflictError), not at its first flush
    store = InMemoryPersistence()
    model = ScriptedModel([text("first"), text("again")])
    async with scripted_harness(model, plugins=[("mem", store)], load_entry_points=False) as h:
        await (await h.agents.create("a", "s1", options={"model": "scripted"})).prompt("hi")
        await h.agents.create("empty", "s2", options={"model": "scripted"})
    async with scripted_harness(model, plugins=[("mem", store)], load_entry_points=False) as h:
        with pytest.raises(DshError) as refused:
            await h.agents.create("b", "s1", options={"model": "scripted"})
        assert h.agents.list() == []
        await h.agents.create("c", "s2", options={"model": "scripted"})  # logged nothing
        resumed = await h.agents.resume("d", "s1")
        assert (await resumed.prompt("more")).text == "again"
    assert str(refused.value) == (
        "session 's1' is stored already (in memory): resume it, or give the new agent "
        "another session id"
    )
    assert len(store.stored["s1"].events) > 6


async def test_the_store_needs_no_session_event_observer() -> None:
    # it reads the session's own log at each flush, so sessions keep no observer
    store = InMemoryPersistence()
    model = ScriptedModel([text("hi")])
    async with scripted_harness(model, plugins=[("mem", store)], load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": model.info.name})
        await run_turn(agent, "hello")
        assert agent.session.observer is None
        assert [e.type for e in store.stored[agent.session.id].events][-1] == "turn/end"


async def test_a_resume_of_a_session_stored_by_hand_stores_only_what_follows() -> None:
    # docs/testing.md: changes to ``stored`` are what a later load sees. Was: the flush
    # after such a resume stored the whole live log again (it counted from zero)
    first = InMemoryPersistence()
    model = ScriptedModel([text("one"), text("two")])
    async with scripted_harness(model, plugins=[("mem", first)], load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "hi")
    sid = agent.session.id
    events = first.stored[sid].events
    store = InMemoryPersistence()
    store.stored[sid] = StoredSession(sid, events[0].time, list(events), {})
    async with scripted_harness(model, plugins=[("mem", store)], load_entry_points=False) as h:
        resumed = await h.agents.resume("b", sid, options={"model": "scripted"})
        await run_turn(resumed, "again")
        live = [e.to_dict() for e in resumed.session.events]
    assert [e.to_dict() for e in store.stored[sid].events] == live
    assert store.flushes == 2  # the turn's and the disposal's


def test_the_scripted_model_works_where_pytest_is_not_installed() -> None:
    # docs/testing.md: a plugin may register a ScriptedModel for `dsh -m scripted run`,
    # in a venv without pytest; only the fixtures need it
    import subprocess
    import sys

    child = """
import sys
sys.modules["pytest"] = None  # import pytest raises ModuleNotFoundError
import anyio
import dsh.testing
from dsh.testing import ScriptedModel, run_turn, scripted_harness

async def main():
    async with scripted_harness(ScriptedModel(["ok"]), load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "hi")
    print(events[-1].data["reason"], hasattr(dsh.testing, "dsh_pm"))

anyio.run(main)
"""
    done = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "completed False\n", "")
