"""Agent registry and handle details the numbered behaviours leave open: each test here
fails on a concrete mutant of ``dsh.agent`` that the other tests let through."""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest

from dsh import DshError, hookimpl
from dsh.agent import AgentHandle
from dsh.loop import AgentDisposedError
from dsh.persistence import (
    SessionHeader,
    SessionPersistence,
    StoredSession,
    find_session,
    last_in,
)
from dsh.session import SessionEvent
from dsh.testing import InMemoryPersistence, ScriptedModel, scripted_harness

LIMIT = 5  # seconds; a broken teardown fails instead of hanging


class OneStored:
    """A persistence service that hands out the very same ``StoredSession`` each load,
    the way a backend with a cache would."""

    def __init__(self, stored: StoredSession) -> None:
        self.stored = stored
        self.loads = 0

    @hookimpl
    def session_persistence(self) -> OneStored:
        return self

    async def list(self) -> list[SessionHeader]:
        return [SessionHeader(self.stored.id, self.stored.created, self.stored.created, 1)]

    async def load(self, session_id: str) -> StoredSession | None:
        self.loads += 1
        return self.stored if session_id == self.stored.id else None

    async def delete(self, session_id: str) -> bool:
        return False


def one_turn() -> list[SessionEvent]:
    raw: list[tuple[str, dict[str, Any]]] = [
        ("turn/start", {"turn": 1}),
        ("user/message", {"content": "hi"}),
        ("turn/end", {"turn": 1, "reason": "completed"}),
    ]
    return [SessionEvent(kind, seq, 1.0, data) for seq, (kind, data) in enumerate(raw)]


async def test_a_new_session_is_named_after_its_agent_and_records_who_created_it() -> None:
    async with scripted_harness(ScriptedModel(), load_entry_points=False) as h:
        first = await h.agents.create("helper")
        second = await h.agents.create("other", meta={"agent": "someone", "tag": 1})
        named = await h.agents.create("third", session_id="mine")
        assert re.fullmatch(r"helper-session-[0-9a-f]{32}", first.session.id)
        assert first.session.meta == {"agent": "helper"}
        assert second.session.meta == {"agent": "someone", "tag": 1}
        assert named.session.id == "mine"
        assert named.session.meta == {"agent": "third"}
        assert h.sessions.get("mine") is named.session
        assert named.id == "third"
        assert h.agents.get("third") is named


async def test_create_leaves_the_callers_meta_dict_alone() -> None:
    meta: dict[str, Any] = {"tag": "x"}
    async with scripted_harness(ScriptedModel(), load_entry_points=False) as h:
        agent = await h.agents.create("a", meta=meta, options={"model": "scripted"})
        assert agent.session.meta == {"tag": "x", "agent": "a", "options": {"model": "scripted"}}
    assert meta == {"tag": "x"}


async def test_a_refused_duplicate_agent_leaves_no_session_behind() -> None:
    async with scripted_harness(ScriptedModel(), load_entry_points=False) as h:
        first = await h.agents.create("a")
        with pytest.raises(DshError, match="agent 'a' already exists; dispose it first"):
            await h.agents.create("a", session_id="second")
        assert h.sessions.get("second") is None
        assert h.sessions.list() == [first.session]
        assert h.agents.list() == [first]


async def test_resume_without_persistence_or_of_an_unknown_session_says_why() -> None:
    async with scripted_harness(ScriptedModel(), load_entry_points=False) as h:
        with pytest.raises(DshError, match="'gone': no persistence plugin is loaded"):
            await h.agents.resume("a", "gone")
    plugins = [("mem", InMemoryPersistence())]
    async with scripted_harness(ScriptedModel(), plugins=plugins, load_entry_points=False) as h:
        with pytest.raises(DshError, match="cannot resume session 'gone': it is not stored"):
            await h.agents.resume("a", "gone")
        with pytest.raises(DshError, match="'gone': it is not stored"):
            await h.agents.load_stored("gone")
        assert h.agents.list() == []
        assert h.sessions.list() == []


async def test_resume_gives_the_live_session_its_own_copy_of_the_stored_meta() -> None:
    stored = StoredSession("s", 5.0, one_turn(), {"agent": "a", "tag": "kept"})
    plugins = [("one", OneStored(stored))]
    async with scripted_harness(ScriptedModel(), plugins=plugins, load_entry_points=False) as h:
        assert await h.agents.load_stored("s") is stored
        agent = await h.agents.resume("a", "s")
        agent.session.meta["tag"] = "changed by the live session"
        assert agent.session.meta["agent"] == "a"
        assert [e.type for e in agent.session.events] == [e.type for e in one_turn()]
    assert stored.meta == {"agent": "a", "tag": "kept"}


async def test_resume_stored_continues_what_load_stored_read_without_reading_it_again() -> None:
    stored = StoredSession("s", 5.0, one_turn(), {"agent": "a", "options": {"max_steps": 3}})
    service = OneStored(stored)
    async with scripted_harness(
        ScriptedModel(), plugins=[("one", service)], load_entry_points=False
    ) as h:
        loaded = await h.agents.load_stored("s")
        agent = await h.agents.resume_stored("a", loaded)
        assert service.loads == 1
        assert agent.session.id == "s" and agent.agent.options == {"max_steps": 3}
        assert [e.type for e in agent.session.events] == [e.type for e in one_turn()]
        assert h.sessions.get("s") is agent.session


async def test_resume_ignores_stored_options_that_are_not_a_mapping() -> None:
    stored = StoredSession("s", 5.0, one_turn(), {"agent": "a", "options": None})
    plugins = [("one", OneStored(stored))]
    async with scripted_harness(ScriptedModel(), plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.resume("a", "s")
        assert agent.agent.options == {}
        assert agent.session.meta == {"agent": "a", "options": None}


async def test_dispose_refuses_new_prompts_before_its_teardown_task_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``dispose()`` marks the agent at once (so a turn that ends meanwhile ends
    ``disposed``); the teardown runs in a task that starts later. The prompt is sent
    right after that task is started, before it runs: an order, unlike two sibling
    tasks', that every backend keeps (trio runs a batch of new tasks in either order)."""
    refused: list[str] = []
    async with scripted_harness(ScriptedModel(), load_entry_points=False) as h:
        handle = await h.agents.create("a")
        start_teardown = h.agents.start_teardown

        def then_send(*args: Any) -> None:
            start_teardown(*args)
            try:
                handle.send("too late")
            except AgentDisposedError as error:
                refused.append(str(error))

        monkeypatch.setattr(h.agents, "start_teardown", then_send)
        with anyio.fail_after(LIMIT):
            await handle.dispose()
        assert refused == ["agent 'a' is disposed; it takes no more prompts"]
        assert h.agents.get("a") is None


async def test_every_agent_is_disposed_on_exit_and_a_later_dispose_returns_at_once() -> None:
    disposed: list[str] = []

    class Watch:
        @hookimpl
        def agent_disposed(self, agent: Any) -> None:
            disposed.append(agent.id)

    handles: list[AgentHandle] = []
    plugins = [("watch", Watch())]
    async with scripted_harness(ScriptedModel(), plugins=plugins, load_entry_points=False) as h:
        for name in ("a", "b", "c"):
            handles.append(await h.agents.create(name))
    assert sorted(disposed) == ["a", "b", "c"]
    assert [handle.agent.status for handle in handles] == ["disposed"] * 3
    with anyio.fail_after(LIMIT):
        await handles[0].dispose()
    assert sorted(disposed) == ["a", "b", "c"]


class Listed:
    """A persistence service that only lists ids (what ``find_session`` reads)."""

    def __init__(self, *ids: str) -> None:
        self.ids = ids

    async def list(self) -> list[SessionHeader]:
        return [SessionHeader(session_id, 0.0, 0.0, 0) for session_id in self.ids]

    async def load(self, session_id: str) -> StoredSession | None:
        return None

    async def delete(self, session_id: str) -> bool:
        return False


async def test_find_session_takes_an_exact_id_over_the_longer_ids_it_begins() -> None:
    assert SessionHeader("abc", 1.0, 2.0, 3).title == ""
    service = Listed("abc", "abcd", "abce")
    assert isinstance(service, SessionPersistence)
    assert await find_session(service, "abc") == "abc"
    assert await find_session(service, "abcd") == "abcd"
    assert await find_session(Listed("main-session-1", "other"), "main") == "main-session-1"


async def test_find_session_names_at_most_five_of_several_matches() -> None:
    five = Listed(*(f"s-{n}" for n in (4, 3, 2, 1, 0)))
    with pytest.raises(DshError, match=r"^'s-' matches 5 sessions: s-0, s-1, s-2, s-3, s-4$"):
        await find_session(five, "s-")
    six = Listed(*(f"s-{n}" for n in range(6)))
    with pytest.raises(DshError, match=r"matches 6 sessions: s-0, s-1, s-2, s-3, s-4 and 1 more$"):
        await find_session(six, "s-")
    with pytest.raises(
        DshError, match=r"^no stored session 'x' \(`dsh sessions list` shows them\)$"
    ):
        await find_session(six, "x")


async def test_find_session_takes_the_start_of_the_part_after_session() -> None:
    service = Listed("main-session-4998ab", "main-session-77aa", "review-session-4f00")
    assert await find_session(service, "4998") == "main-session-4998ab"
    assert await find_session(service, "77") == "main-session-77aa"
    with pytest.raises(DshError, match=r"^'4' matches 2 sessions: main-session-4998ab, review"):
        await find_session(service, "4")
    with pytest.raises(DshError, match=r"^no stored session 'session'"):
        await find_session(service, "session")  # only the start of each part counts


def test_last_in_takes_the_newest_session_of_the_workspace_or_of_none_recorded() -> None:
    """What `dsh run --continue` takes: a backend that records no workspace ("") keeps
    the last session of the store, wherever it was started."""
    newest_elsewhere = SessionHeader("b", 0.0, 3.0, 1, workspace="/b")
    here = SessionHeader("a", 0.0, 2.0, 1, workspace="/a")
    unknown = SessionHeader("u", 0.0, 1.0, 1)
    assert last_in([newest_elsewhere, here, unknown], "/a") is here
    assert last_in([newest_elsewhere, unknown, here], "/a") is unknown
    assert last_in([newest_elsewhere, here], "/c") is None
    assert last_in([], "/a") is None
