"""A plugin's history reducer that raises: the event is not logged, the history is as
it was, the error names the plugin; a stored log a reducer refuses is not resumed."""

from __future__ import annotations

from typing import Any

import pytest

from dsh import DshError, HistoryReducerError, UserMessage, hookimpl
from dsh.session import Session
from dsh.testing import (
    InMemoryPersistence,
    ScriptedModel,
    check_invariants,
    run_turn,
    scripted_harness,
)

OPTIONS = {"model": "scripted"}


class Notes:
    """A reducer for ``notes/pinned`` that appends the note, then raises while
    ``broken`` (a plugin's bug halfway through)."""

    def __init__(self, *, broken: bool = True) -> None:
        self.broken = broken

    @hookimpl
    def register_history_reducers(self, register: Any) -> None:
        register("notes/pinned", self.reduce)

    def reduce(self, history: list[Any], event: Any) -> None:
        history.append(UserMessage(content=f"Note: {event.data['text']}"))
        if self.broken:
            raise ValueError(f"cannot pin {event.data['text']!r}")


async def test_a_raising_reducer_leaves_neither_event_nor_history_behind() -> None:
    store = InMemoryPersistence()
    model = ScriptedModel(["one", "two", "three"])
    plugins = [("notes", Notes()), ("mem", store)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        await run_turn(agent, "hi")
        events, history = list(agent.session.events), list(agent.session.history)
        with pytest.raises(HistoryReducerError) as info:
            await agent.session.emit("notes/pinned", {"text": "metric"})
        assert list(agent.session.events) == events
        assert list(agent.session.history) == history
        await run_turn(agent, "again")
        session_id = agent.session.id
        assert check_invariants(agent.session.events) == []
    error = info.value
    assert (error.plugin, error.event_type, error.seq) == ("notes", "notes/pinned", len(events))
    assert error.code == "HISTORY_REDUCER"
    assert isinstance(error.cause, ValueError)
    assert str(error) == (
        f"plugin 'notes': its history reducer for 'notes/pinned' (Notes.reduce) failed on "
        f"event {len(events)}: ValueError: cannot pin 'metric'"
    )
    # the half-applied note never reached the model, and the stored session resumes
    assert UserMessage(content="Note: metric") not in model.requests[1].messages
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        resumed = await h.agents.resume("a", session_id, options=OPTIONS)
        assert [e.type for e in resumed.session.events] == [e.type for e in events] * 2
        assert "notes/pinned" not in [e.type for e in store.stored[session_id].events]
        await run_turn(resumed, "once more")
    model.assert_complete()


class EmitsOnFirstStep(Notes):
    @hookimpl
    async def agent_request(self, agent: Any, step: int) -> None:
        if step == 1:
            await agent.session.emit("notes/pinned", {"text": "metric"})


async def test_a_raising_reducer_in_a_hook_ends_the_turn_naming_the_plugin() -> None:
    model = ScriptedModel(["after"])
    notes = EmitsOnFirstStep()
    async with scripted_harness(model, plugins=[("notes", notes)], load_entry_points=False) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        events = await run_turn(agent, "hi")
        assert "notes/pinned" not in [e.type for e in agent.session.events]
        assert check_invariants(agent.session.events) == []
        error = events[-1].data["error"]
        assert events[-1].data["reason"] == "error"
        assert error["message"].startswith("plugin 'notes' failed in hook agent_request")
        assert "its history reducer for 'notes/pinned' (Notes.reduce)" in error["message"]
        notes.broken = False
        assert (await run_turn(agent, "next"))[-1].data["reason"] == "completed"
        assert UserMessage(content="Note: metric") in agent.session.history


async def test_a_stored_event_the_reducer_refuses_stops_the_resume_naming_it() -> None:
    store = InMemoryPersistence()
    model = ScriptedModel(["one"])
    notes = Notes(broken=False)
    plugins = [("notes", notes), ("mem", store)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        await agent.session.emit("notes/pinned", {"text": "metric"})
        await run_turn(agent, "hi")
        session_id = agent.session.id
    notes.broken = True
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        with pytest.raises(HistoryReducerError, match=r"plugin 'notes'.*failed on event 0"):
            await h.agents.resume("a", session_id, options=OPTIONS)
        assert h.agents.list() == []


def test_session_append_takes_back_an_event_whose_reducer_raises() -> None:
    def reduce(history: list[Any], event: Any) -> None:
        history.append(UserMessage(content="half"))
        raise KeyError("text")

    session = Session("s", reducers={"notes/pinned": reduce})
    session._append("user/note", {})
    with pytest.raises(KeyError):
        session.append("notes/pinned", {})
    assert [e.type for e in session.events] == ["user/note"]
    assert list(session.history) == []
    assert session._append("user/note", {}).seq == 1


def test_the_event_is_not_in_the_log_while_its_reducer_runs() -> None:
    """A persistence plugin's worker thread may read the log while a reducer runs: an
    event its reducer then refuses must never have been there to be stored."""
    seen: list[list[str]] = []

    def reduce(history: list[Any], event: Any) -> None:
        seen.append([e.type for e in session.events])
        raise ValueError("refused")

    session = Session("s", reducers={"notes/pinned": reduce})
    session._append("user/note", {})
    with pytest.raises(ValueError, match="refused"):
        session.append("notes/pinned", {})
    assert seen == [["user/note"]]


async def test_a_reducer_for_a_core_type_stops_start_up() -> None:
    class OnTurnEnd:
        @hookimpl
        def register_history_reducers(self, register: Any) -> None:
            register("turn/end", lambda history, event: None)

    with pytest.raises(
        DshError, match=r"plugin 'late' registers a history reducer for .*'turn/end'.*core"
    ):
        async with scripted_harness(plugins=[("late", OnTurnEnd())], load_entry_points=False):
            pass


async def test_a_fork_before_the_event_a_reducer_refuses_goes_on() -> None:
    store = InMemoryPersistence()
    model = ScriptedModel(["one", "two", "three"])
    notes = Notes(broken=False)
    plugins = [("notes", notes), ("mem", store)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a", options=OPTIONS)
        await run_turn(agent, "hi")
        await agent.session.emit("notes/pinned", {"text": "metric"})
        await run_turn(agent, "again")
        session_id = agent.session.id
    notes.broken = True
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        fork = await h.agents.fork("b", session_id, 1, options=OPTIONS)
        assert [e.type for e in fork.session.events].count("turn/end") == 1
        await run_turn(fork, "from turn one")
        with pytest.raises(TypeError, match=r"agents.fork\(turns=...\) takes an int, not a bool"):
            await h.agents.fork("c", session_id, True, options=OPTIONS)
    model.assert_complete()
