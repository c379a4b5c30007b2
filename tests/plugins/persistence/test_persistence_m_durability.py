"""What reaches the disk, and when (docs/persistence.md, "What is written, and when").

``os.fsync`` is wrapped (the real one still runs) to see which files are synced:
checkpointed events become durable at the next flush even when it has nothing new to
write, a deletion is made durable, and the plugin asks the backend for durable writes
where the settings say so.
"""

from __future__ import annotations

import os
import stat
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
    SessionInfo,
    SqliteBackend,
)
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

LIMIT = 10


@pytest.fixture
def synced(monkeypatch: pytest.MonkeyPatch) -> list[os.stat_result]:
    """The ``fstat`` of every file or directory fsync'd from now on."""
    calls: list[os.stat_result] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        calls.append(os.fstat(fd))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return calls


def inodes(calls: list[os.stat_result]) -> list[int]:
    return [call.st_ino for call in calls]


def test_jsonl_sync_fsyncs_the_session_file(tmp_path: Path, synced: list[os.stat_result]) -> None:
    """``sync`` makes events stored by non-durable appends (checkpoints) durable; a
    session that is not stored has nothing to sync and is no error."""
    backend = JsonlBackend(tmp_path)
    backend.append(SessionInfo("s", 1.0), LogBuilder().turn(), durable=False)
    synced.clear()

    backend.sync("s")
    assert inodes(synced) == [(tmp_path / "s.jsonl").stat().st_ino]
    backend.sync("not-stored")
    assert len(synced) == 1


def test_sqlite_sync_fsyncs_the_write_ahead_log(
    tmp_path: Path, synced: list[os.stat_result]
) -> None:
    """SQLite ``sync`` fsyncs the WAL, where the commits of non-durable appends are."""
    path = tmp_path / "db.sqlite3"
    backend = SqliteBackend(path)
    try:
        backend.append(SessionInfo("s", 1.0), LogBuilder().turn(), durable=False)
        synced.clear()
        backend.sync("s")
        assert inodes(synced) == [Path(f"{path}-wal").stat().st_ino]
    finally:
        backend.close()


def test_a_deletion_is_made_durable(tmp_path: Path, synced: list[os.stat_result]) -> None:
    """Deleting a JSONL session fsyncs the directory, so a power cut does not bring the
    session back."""
    backend = JsonlBackend(tmp_path)
    backend.append(SessionInfo("s", 1.0), LogBuilder().turn(), durable=True)
    synced.clear()

    assert backend.delete("s") is True
    assert [stat.S_ISDIR(call.st_mode) for call in synced] == [True]
    assert inodes(synced) == [tmp_path.stat().st_ino]


class Recording(JsonlBackend):
    """A JSONL backend that records how each append was asked for."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.appends: list[tuple[str, bool]] = []

    def append(self, info: SessionInfo, events: Sequence[SessionEvent], *, durable: bool) -> None:
        self.appends.append((events[-1].type, durable))
        super().append(info, events, durable=durable)


@pytest.mark.parametrize("fsync", ["flush", "always"])
async def test_a_turns_flush_is_a_durable_write(tmp_path: Path, fsync: str) -> None:
    """Unless ``fsync: never``, the flush after a turn returns only once its events are
    on disk: the backend is asked for a durable append."""
    backend = Recording(tmp_path)
    settings = PersistenceSettings(directory=tmp_path, fsync=fsync, checkpoints=False)
    plugin = PersistencePlugin(settings, backend=backend)
    try:
        async with scripted_harness(
            ScriptedModel([text("one")]), plugins=[plugin], load_entry_points=False
        ) as h:
            agent = await h.agents.create("a", options={"model": "scripted"})
            with anyio.fail_after(LIMIT):
                await run_turn(agent, "first")
    finally:
        plugin.close()
    assert backend.appends[0] == ("turn/end", True)


@pytest.mark.parametrize(("fsync", "durable"), [("always", True), ("flush", False)])
def test_checkpoints_are_durable_only_with_fsync_always(
    tmp_path: Path, fsync: str, durable: bool
) -> None:
    """``fsync: always`` fsyncs checkpoints too; ``flush`` writes them without waiting
    for the disk (the turn's flush makes them durable)."""
    backend = Recording(tmp_path)
    settings = PersistenceSettings(directory=tmp_path, fsync=fsync, checkpoint_delay=0)
    plugin = PersistencePlugin(settings, backend=backend)
    session = Session("s")
    try:
        session._append("turn/start", {"turn": 1})
        call = session._append("tool/call", {"id": "c", "name": "x", "arguments": "{}"})
        plugin.session_event(session, call)
    finally:
        plugin.close()  # writes the pending checkpoint now
    assert backend.appends == [("tool/call", durable)]
