"""SQLite on a full disk: the error says what could not be written, that none of it was
stored, and that the running session keeps every event (the next save writes them).

Before: a database created on a full disk said "cannot open the session database:
database or disk is full" (it had opened; creating its tables failed), and a save to
one that filled up said only "<path>: database or disk is full".

The full disk is SQLite's own limit on the database's size (``PRAGMA max_page_count``,
set on each connection the backend makes): the same SQLITE_FULL error a full file
system gives (seen on a 2 MB tmpfs: the same words), with no mount needed."""

from __future__ import annotations

import sqlite3
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

from dsh.testing import ErrorRecorder, ScriptedModel, run_turn, scripted_harness, text
from dsh_persistence import (
    PersistencePlugin,
    PersistenceSettings,
    SessionInfo,
    SessionStoreUnusableError,
    SqliteBackend,
)
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

KEPT = "not stored (the running session keeps them; its next save tries again)"


class Disk:
    """Each connection made to a database under ``directory`` (all the backend's) can
    grow it to ``pages`` pages at most (None: no limit): ``fill`` and ``free`` set that
    on the open ones too."""

    def __init__(self, directory: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.directory = str(directory)
        self.pages: int | None = None
        self.connections: list[sqlite3.Connection] = []
        connect = sqlite3.connect

        def limited(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
            db = connect(database, *args, **kwargs)
            if str(database).startswith(self.directory):
                self.connections.append(db)
                if self.pages is not None:
                    db.execute(f"PRAGMA max_page_count={self.pages}")
            return db

        monkeypatch.setattr(sqlite3, "connect", limited)

    def fill(self, pages: int = 1) -> None:
        """Let no database grow (one that is larger stays as it is)."""
        self._limit(pages)

    def free(self) -> None:
        self._limit(2**30)
        self.pages = None

    def _limit(self, pages: int) -> None:
        self.pages = pages
        for db in self.connections:
            with suppress(sqlite3.ProgrammingError):  # closed
                db.execute(f"PRAGMA max_page_count={pages}")


@pytest.fixture
def disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Disk:
    return Disk(tmp_path, monkeypatch)


def test_a_database_created_on_a_full_disk_says_its_tables_could_not_be_written(
    tmp_path: Path, disk: Disk
) -> None:
    path = tmp_path / "db.sqlite3"
    disk.fill()
    backend = SqliteBackend(path, source="persistence.database")
    log = LogBuilder()
    log.turn("hello")
    try:
        with pytest.raises(SessionStoreUnusableError) as caught:
            backend.append(SessionInfo("s", 1.0), log.events, durable=True)
        assert str(caught.value) == (
            f"{path} (persistence.database): cannot create the session database's tables: "
            f"database or disk is full; events seq 0-{len(log.events) - 1} of session 's' {KEPT}"
        )
        disk.free()
        backend.append(SessionInfo("s", 1.0), log.events, durable=True)  # tried again
        loaded = backend.load("s")
        assert loaded is not None and loaded.stored.events == log.events
    finally:
        backend.close()


async def test_a_save_on_a_full_disk_says_what_it_did_not_store_and_the_next_stores_it(
    tmp_path: Path, disk: Disk
) -> None:
    settings = PersistenceSettings(backend="sqlite", directory=tmp_path / "store")  # type: ignore[arg-type]
    errors = ErrorRecorder()
    plugin = PersistencePlugin(settings)
    model = ScriptedModel([text("ok")] * 3)
    plugins = [("persistence", plugin), ("errors", errors)]
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("agent", session_id="s", options={"model": "scripted"})
        await run_turn(agent, "first")
        stored = len(agent.session.events)
        disk.fill()
        await run_turn(agent, "second " + "x" * 100_000)
        said = [str(error) for error in errors.errors]
        assert said, "the save should have failed"
        path = tmp_path / "store" / "sessions.sqlite3"
        # the prompt's checkpoint, then the turn's flush (from the same first event)
        assert (
            f"{path}: cannot write to the session database: database or disk is full; "
            f"events seq {stored}-"
        ) in said[0]
        assert f" of session 's' {KEPT}" in said[0]
        disk.free()
        await run_turn(agent, "third")
        live = list(agent.session.events)
    plugin.close()
    backend = SqliteBackend(path)
    try:
        loaded = backend.load("s")
    finally:
        backend.close()
    assert loaded is not None and loaded.stored.events == live
