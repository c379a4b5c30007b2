"""``PersistencePlugin``: which store and settings a session is written with, and which
session a flush writes (docs/persistence.md, "Where the plugin reads its settings")."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from dsh.session import Session, SessionEvent
from dsh.testing import ScriptedModel, run_turn, scripted_harness, text
from dsh_persistence import (
    JsonlBackend,
    PersistencePlugin,
    PersistenceSettings,
    SessionConflictError,
    SessionInfo,
    open_backend,
)

pytestmark = pytest.mark.plugins("persistence")

LIMIT = 10


def test_pinned_settings_ignore_configure(tmp_path: Path) -> None:
    """Settings given to the constructor are pinned: ``configure`` (what a harness or
    ``dsh sessions`` does with the config's section) does not change the store."""
    pinned = PersistenceSettings(directory=tmp_path / "pinned")
    plugin = PersistencePlugin(pinned)
    try:
        plugin.configure(PersistenceSettings(directory=tmp_path / "config"))
        assert plugin.settings is pinned
        assert isinstance(plugin.backend, JsonlBackend)
        assert plugin.backend.directory == tmp_path / "pinned"
    finally:
        plugin.close()


def test_configure_applies_to_sessions_written_afterwards(tmp_path: Path) -> None:
    """Each ``configure`` takes effect for the next session, not only the first one."""
    plugin = PersistencePlugin()
    try:
        for name in ("one", "two", "three"):
            settings = PersistenceSettings(directory=tmp_path / name)
            plugin.configure(settings)
            assert plugin.settings is settings
            assert plugin.backend.location == str(tmp_path / name)
    finally:
        plugin.close()


class Recording(JsonlBackend):
    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.appends = 0

    def append(self, info: SessionInfo, events: Sequence[SessionEvent], *, durable: bool) -> None:
        self.appends += 1
        super().append(info, events, durable=durable)


def test_checkpoints_false_asks_for_no_checkpoint(tmp_path: Path) -> None:
    """With ``checkpoints: false`` a running turn is written only by its flush: tool
    events schedule nothing."""
    backend = Recording(tmp_path)
    settings = PersistenceSettings(directory=tmp_path, checkpoints=False, checkpoint_delay=0)
    plugin = PersistencePlugin(settings, backend=backend)
    session = Session("s")
    session._append("turn/start", {"turn": 1})
    session._append("step/start", {"turn": 1, "step": 1})
    call = {"id": "c", "name": "x", "arguments": "{}"}
    result = {"call_id": "c", "name": "x", "content": "ok", "is_error": False}
    for kind, data in (("tool/call", call), ("tool/result", result), ("step/end", {})):
        plugin.session_event(session, session._append(kind, data))
    plugin.close()  # would write a pending checkpoint now
    assert backend.appends == 0
    assert list(tmp_path.iterdir()) == []


async def test_a_second_live_session_under_one_id_is_not_written_as_the_first(
    settings: PersistenceSettings,
) -> None:
    """Two live session objects with one id (two agents of a process): each flush
    writes its own session. The second does not continue the stored log of the first,
    so its flush is refused as a conflict, not silently skipped."""
    plugin = PersistencePlugin(settings)
    first, second = Session("s"), Session("s")
    first._append("turn/start", {"turn": 1})
    first._append("user/message", {"content": "first"})
    second._append("turn/start", {"turn": 1})
    second._append("user/message", {"content": "second"})
    second.append("test/note", {})
    try:
        await plugin.session_flush(first)
        with pytest.raises(SessionConflictError):
            await plugin.session_flush(second)
    finally:
        plugin.close()
    backend = open_backend(settings)
    try:
        loaded = backend.load("s")
    finally:
        backend.close()
    assert loaded is not None
    assert [e.data for e in loaded.stored.events[: loaded.kept]] == [e.data for e in first.events]


async def test_a_session_keeps_its_store_when_another_harness_stops(tmp_path: Path) -> None:
    """One plugin object in two harnesses of a process: when the second harness stops,
    the first harness's live session goes on being written to its own store, whole,
    not re-created in the store the second harness configured."""
    plugin = PersistencePlugin()

    def config(name: str) -> str:
        return f"persistence:\n  directory: {tmp_path / name}\n"

    model = ScriptedModel([text("one"), text("two"), text("three")])
    first_harness = scripted_harness(
        model, plugins=[("persistence", plugin)], load_entry_points=False, config_text=config("a")
    )
    async with first_harness as first:
        agent = await first.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "one")
        second = scripted_harness(
            ScriptedModel([]),
            plugins=[("persistence", plugin)],
            load_entry_points=False,
            config_text=config("b"),
        )
        async with second:
            with anyio.fail_after(LIMIT):
                await run_turn(agent, "two")
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "three")  # after the second harness stopped
        session_id, live = agent.session.id, [e.to_dict() for e in agent.session.events]

    assert not list((tmp_path / "b").glob("*.jsonl"))
    loaded = JsonlBackend(tmp_path / "a").load(session_id)
    assert loaded is not None
    assert [e.to_dict() for e in loaded.stored.events] == live


async def test_a_disposed_agents_session_leaves_nothing_behind_in_the_store(
    tmp_path: Path,
) -> None:
    """A long-running program creates and disposes agent after agent: what the JSONL
    store keeps in memory per session (the file's end, its lock) goes with the agent,
    and the session is read again from its file when it is resumed."""
    plugin = PersistencePlugin(PersistenceSettings(directory=tmp_path))
    model = ScriptedModel([text(f"answer {n}") for n in range(21)])
    async with scripted_harness(
        model, plugins=[("persistence", plugin)], load_entry_points=False
    ) as h:
        backend = plugin.backend
        assert isinstance(backend, JsonlBackend)
        ids = []
        for n in range(20):
            agent = await h.agents.create(f"a{n}", options={"model": "scripted"})
            with anyio.fail_after(LIMIT):
                await run_turn(agent, "hi")
            ids.append(agent.session.id)
            await agent.dispose()
        assert (backend._ends, backend._locks) == ({}, {})
        again = await h.agents.resume("again", ids[3])
        with anyio.fail_after(LIMIT):
            events = await run_turn(again, "more")
        assert events[-1].data["reason"] == "completed"
        assert [e.seq for e in again.session.events] == list(range(len(again.session.events)))
    stored = open_backend(PersistenceSettings(directory=tmp_path)).load(ids[3])
    assert stored is not None and len(stored.stored.events) == len(again.session.events)
