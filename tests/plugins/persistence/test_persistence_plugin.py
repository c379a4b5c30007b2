"""The plugin's hooks: flush durability, checkpoints, ordering, conflicts, settings."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

import dsh_persistence
from dsh import hookimpl
from dsh.harness import Harness
from dsh.plugins import list_plugins
from dsh.session import SessionEvent
from dsh.testing import (
    ErrorRecorder,
    ScriptedModel,
    hang,
    run_turn,
    scripted_harness,
    text,
    tool_calls,
)
from dsh.tools import tool
from dsh_persistence import (
    JsonlBackend,
    PersistenceError,
    PersistencePlugin,
    PersistenceSettings,
    SessionConflictError,
    open_backend,
)

pytestmark = pytest.mark.plugins("persistence")

LIMIT = 10


class Blocking:
    """A ``block`` tool that waits until ``release`` is set."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.release = anyio.Event()

        @tool
        async def block() -> str:
            "Wait to be released."
            self.started.set()
            await self.release.wait()
            return "released"

        self.tool = block

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(self.tool)


@asynccontextmanager
async def harness_with(
    plugin: PersistencePlugin, model: ScriptedModel, *plugins: tuple[str, object]
) -> AsyncIterator[Harness]:
    try:
        everything = [("persistence", plugin), *plugins]
        async with scripted_harness(model, plugins=everything, load_entry_points=False) as h:
            yield h
    finally:
        plugin.close()


def stored_types(settings: PersistenceSettings, session_id: str) -> list[str]:
    backend = open_backend(settings)
    try:
        tail = backend.tail(session_id)
        loaded = backend.load(session_id) if tail else None
    finally:
        backend.close()
    return [] if loaded is None else [e.type for e in loaded.stored.events[: loaded.kept]]


def test_the_entry_point_registers_the_module_and_its_hooks() -> None:
    from dsh.plugins import create_plugin_manager

    pm = create_plugin_manager(select=["persistence"], env={"DSH_LOAD_PLUGINS": ""})
    (info,) = [i for i in list_plugins(pm) if i.name == "persistence"]
    assert info.distribution == "dsh-persistence"
    expected = {"session_event", "session_flush", "session_persistence", "register_settings"}
    assert expected <= set(info.hooks)
    assert pm.get_plugin("persistence") is dsh_persistence


# -- the write path -----------------------------------------------------------------------


async def test_a_flush_returns_after_fsync_and_only_then(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.fstat(fd).st_size)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    settings = PersistenceSettings(directory=tmp_path, checkpoints=False)
    async with harness_with(PersistencePlugin(settings), ScriptedModel(["one", "two"])) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "first")
            first = list(synced)
            await run_turn(agent, "second")
        path = tmp_path / f"{agent.session.id}.jsonl"

    # creation: the temp file and the directory; then one fsync per turn's append
    assert len(first) == 2 and len(synced) == 3
    assert synced[-1] == path.stat().st_size


async def test_fsync_never_does_not_wait_for_the_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", synced.append)
    settings = PersistenceSettings(directory=tmp_path, fsync="never")
    async with harness_with(PersistencePlugin(settings), ScriptedModel(["one"])) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "first")
    assert synced == []
    assert stored_types(settings, agent.session.id)[-1] == "turn/end"


@pytest.mark.parametrize("checkpoints", [True, False])
async def test_checkpoints_store_a_running_turn_before_it_ends(
    settings: PersistenceSettings, checkpoints: bool
) -> None:
    settings = settings.model_copy(update={"checkpoints": checkpoints})
    blocking = Blocking()
    model = ScriptedModel([tool_calls(("block", {})), text("done")])
    async with harness_with(PersistencePlugin(settings), model, ("tools", blocking)) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        agent.send("go")
        with anyio.fail_after(LIMIT):
            await blocking.started.wait()
        if checkpoints:  # the checkpoint runs in a thread: poll until it wrote
            with anyio.fail_after(LIMIT):
                while "tool/call" not in stored_types(settings, agent.session.id):  # noqa: ASYNC110
                    await anyio.sleep(0.005)
        mid_turn = stored_types(settings, agent.session.id)
        with anyio.fail_after(LIMIT):
            blocking.release.set()
            await agent.when_idle()
        final = stored_types(settings, agent.session.id)

    if checkpoints:
        assert mid_turn[-1] == "tool/call" and "turn/end" not in mid_turn
    else:
        assert mid_turn == []
    assert final == [e.type for e in agent.session.events]


class Counting(JsonlBackend):
    """Counts appends (checkpoints and flushes alike)."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.appends = 0

    def append(self, info: Any, events: Any, *, durable: bool) -> None:
        self.appends += 1
        super().append(info, events, durable=durable)


async def test_a_turn_shorter_than_the_checkpoint_delay_is_written_once(tmp_path: Path) -> None:
    backend = Counting(tmp_path)
    plugin = PersistencePlugin(PersistenceSettings(checkpoint_delay=5.0), backend=backend)
    model = ScriptedModel([tool_calls(("block", {})), text("done")] * 2)
    blocking = Blocking()
    blocking.release.set()
    async with harness_with(plugin, model, ("tools", blocking)) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "one")
            await run_turn(agent, "two")
        assert backend.appends == 2  # the flushes; the checkpoints found nothing new


async def test_a_failed_flush_is_made_good_by_the_next_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real, failures = os.fsync, [OSError(5, "Input/output error")]

    def flaky(fd: int) -> None:
        if failures:
            raise failures.pop()  # after the write: part of the log is stored
        real(fd)

    errors = ErrorRecorder()
    settings = PersistenceSettings(directory=tmp_path, checkpoints=False)
    plugin = PersistencePlugin(settings)
    async with harness_with(plugin, ScriptedModel(["one", "two"]), ("errors", errors)) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "first")  # creates the file
            monkeypatch.setattr(os, "fsync", flaky)
            await run_turn(agent, "second")  # written, fsync fails: reported
            assert len(errors.errors) == 1 and "Input/output error" in str(errors.errors[0])
            await run_turn(agent, "third")  # no seq clash: continues where the file ends
    assert len(errors.errors) == 1
    assert stored_types(settings, agent.session.id) == [e.type for e in agent.session.events]


def test_a_flush_makes_checkpointed_events_durable(tmp_path: Path) -> None:
    from dsh.session import Session
    from dsh_persistence._writer import SessionWriter

    synced: list[str] = []

    class Syncs(JsonlBackend):
        def sync(self, session_id: str) -> None:
            synced.append(session_id)
            super().sync(session_id)

    session = Session("s")
    session.append("test/note", {})
    writer = SessionWriter(Syncs(tmp_path), session)
    writer.write(durable=False)  # a checkpoint wrote everything
    assert synced == []
    writer.write(durable=True)  # the flush has nothing to write, but must still fsync
    assert synced == ["s"]
    writer.write(durable=True)
    assert synced == ["s"]


async def test_the_checkpoint_thread_ends_with_the_last_harness(tmp_path: Path) -> None:
    import threading

    blocking = Blocking()
    blocking.release.set()
    settings = PersistenceSettings(directory=tmp_path)
    model = ScriptedModel([tool_calls(("block", {})), text("done")])
    async with scripted_harness(
        model,
        plugins=[("persistence", PersistencePlugin(settings)), ("tools", blocking)],
        load_entry_points=False,
    ) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "go")
        names = [t.name for t in threading.enumerate()]
        assert "dsh-persistence-checkpoints" in names
    assert "dsh-persistence-checkpoints" not in [t.name for t in threading.enumerate()]


async def test_concurrent_flushes_of_one_session_store_each_event_once(
    settings: PersistenceSettings,
) -> None:
    plugin = PersistencePlugin(settings)
    async with harness_with(plugin, ScriptedModel(["one"])) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "first")
        session = agent.session
        async with anyio.create_task_group() as tg:
            for n in range(20):
                session.append("note/n", {"n": n})
                tg.start_soon(h.relay.session_flush, session)
        stored = stored_types(settings, session.id)
    assert stored == [e.type for e in session.events]


async def test_a_dispose_mid_turn_stores_the_disposed_turn(settings: PersistenceSettings) -> None:
    started = anyio.Event()

    def hanging(request: Any) -> Any:
        started.set()
        return hang("thinking")

    async with harness_with(PersistencePlugin(settings), ScriptedModel([hanging])) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        agent.send("go")
        with anyio.fail_after(LIMIT):
            await started.wait()
            await agent.dispose()
    assert stored_types(settings, agent.session.id) == [e.type for e in agent.session.events]
    assert agent.session.events[-1].data["reason"] == "disposed"


async def test_a_new_session_under_a_stored_id_is_refused_not_merged(
    settings: PersistenceSettings,
) -> None:
    async with harness_with(PersistencePlugin(settings), ScriptedModel(["one", "two"])) as h:
        agent = await h.agents.create("a", session_id="fixed", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "first")
            await run_turn(agent, "second")
    before = stored_types(settings, "fixed")

    # refused as the agent is created (its session is claimed), before any model call
    plugin = PersistencePlugin(settings)
    model = ScriptedModel(["other"])
    async with harness_with(plugin, model) as h:
        with pytest.raises(SessionConflictError, match="'fixed' is stored already"):
            await h.agents.create("b", session_id="fixed", options={"model": "scripted"})
        assert h.agents.get("b") is None
        again = await h.agents.create("b", session_id="other", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            await run_turn(again, "a different conversation")
    assert model.requests and stored_types(settings, "fixed") == before


async def test_deleting_a_live_session_is_refused(settings: PersistenceSettings) -> None:
    plugin = PersistencePlugin(settings)
    async with harness_with(plugin, ScriptedModel(["one"])) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        with anyio.fail_after(LIMIT):
            await run_turn(agent, "first")
        service = await h.relay.session_persistence()
        assert service is not None
        with pytest.raises(PersistenceError, match="live"):
            await service.delete(agent.session.id)
        await agent.dispose()
        assert await service.delete(agent.session.id) is True
        assert await service.list() == []


def test_session_event_only_schedules_work_at_checkpoints(tmp_path: Path) -> None:
    plugin = PersistencePlugin(PersistenceSettings(directory=tmp_path))
    from dsh.session import Session

    session = Session("s")
    for kind in ("turn/start", "note/x", "step/start", "assistant/chunk"):
        plugin.session_event(session, session._append(kind, {}))
    plugin.close()  # writes pending checkpoints at once: there are none
    assert list(tmp_path.iterdir()) == []
    plugin.session_event(session, session._append("step/end", {}))
    plugin.close()
    assert [p.name for p in tmp_path.iterdir()] == ["s.jsonl"]


def test_files_are_private(settings: PersistenceSettings) -> None:
    from dsh_persistence import SessionInfo

    backend = open_backend(settings)
    backend.append(SessionInfo("s", 1.0), [SessionEvent("note", 0, 1.0, {})], durable=True)
    backend.close()
    files = [
        p for p in settings.session_directory().iterdir() if p.suffix in (".jsonl", ".sqlite3")
    ]
    assert files and all(p.stat().st_mode & 0o077 == 0 for p in files)


async def test_a_session_keeps_the_settings_it_started_with_when_another_harness_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One plugin object in two harnesses of a process (the entry point's module is one
    object): the second harness's config applies to sessions first written after it,
    not to the first harness's session, which keeps its own fsync setting."""
    plugin = PersistencePlugin()
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))

    def config(name: str, fsync: str) -> str:
        return f"persistence:\n  directory: {tmp_path / name}\n  fsync: {fsync}\n"

    model = ScriptedModel([text("one"), text("two")])
    durable = scripted_harness(
        model,
        plugins=[("persistence", plugin)],
        load_entry_points=False,
        config_text=config("durable", "flush"),
    )
    async with durable as first:
        agent = await first.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "hi")
        before = len(synced)
        assert before > 0
        fast = scripted_harness(
            ScriptedModel([]),
            plugins=[("persistence", plugin)],
            load_entry_points=False,
            config_text=config("fast", "never"),
        )
        async with fast:
            await run_turn(agent, "again")  # the first harness's session: still fsync'd
            assert len(synced) > before
    assert len(list((tmp_path / "durable").glob("*.jsonl"))) == 1
