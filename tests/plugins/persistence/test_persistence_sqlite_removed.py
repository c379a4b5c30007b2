"""A SQLite database, or the lock files of its claims, removed or replaced while a
backend has them open.

An open connection keeps writing into a removed database file (its inode lives on
while open), so every later save would "succeed" and the session be lost. The backend
stats the path before each use: a database gone or replaced is let go of and opened
anew, where the session is not stored (or stored differently): the write is refused as
a JSONL append to a removed file is, and the next one stores the whole log again.

A claim is a locked file in ``<database>-claims/``; removed, another process could
claim the session too. Before a claimed write the backend checks that the path still
leads to its file: if not, the claim is taken again, or, when another process holds it
now, it is lost (``SessionInUseError``, as a PostgreSQL claim whose connection ended).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import pytest

from dsh.testing import ScriptedModel, run_turn, scripted_harness, text
from dsh_persistence import (
    PersistencePlugin,
    PersistenceSettings,
    SessionConflictError,
    SessionInfo,
    SessionInUseError,
    SqliteBackend,
)
from dsh_persistence.testing import LogBuilder

pytestmark = [
    pytest.mark.plugins("persistence"),
    pytest.mark.skipif(os.name == "nt", reason="an open file cannot be removed there"),
]

INFO = SessionInfo("s", 1.0)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "store" / "db.sqlite3"


@pytest.fixture
def backends(path: Path) -> Iterator[Callable[[], SqliteBackend]]:
    """New backends of ``path`` (each as another process), closed at the end."""
    made: list[SqliteBackend] = []

    def new() -> SqliteBackend:
        made.append(SqliteBackend(path))
        return made[-1]

    yield new
    for backend in made:
        backend.close()


def remove_database(path: Path) -> None:
    for name in (path.name, f"{path.name}-wal", f"{path.name}-shm"):
        (path.parent / name).unlink(missing_ok=True)


def test_a_removed_database_refuses_the_next_write_then_stores_the_whole_log(
    path: Path, backends: Callable[[], SqliteBackend]
) -> None:
    log = LogBuilder()
    first = log.turn("one")
    backend = backends()
    backend.append(INFO, first, durable=True)
    remove_database(path)
    assert backend.headers() == []  # not what the removed file still holds
    assert not path.exists()  # reading created nothing

    second = log.turn("two")
    with pytest.raises(SessionConflictError, match="removed or replaced") as caught:
        backend.append(INFO, second, durable=True)
    assert str(path) in str(caught.value)
    assert backend.tail("s") is None  # what a writer asks next: it stores it all
    backend.append(INFO, log.events, durable=True)

    loaded = backends().load("s")
    assert loaded is not None and loaded.kept == len(log.events)


def test_a_new_database_never_replays_the_log_of_a_removed_one(
    path: Path, backends: Callable[[], SqliteBackend]
) -> None:
    """Only the database file removed, its ``-wal`` left with frames of its pages:
    the database made anew at the path must not take them in (pages of another file)."""
    log = LogBuilder()
    backend = backends()
    backend.append(INFO, log.turn("one"), durable=True)
    with closing(sqlite3.connect(path)) as other:  # part of it copied into the database file
        other.execute("PRAGMA wal_checkpoint(PASSIVE)")
    backend.append(INFO, log.turn("two"), durable=True)
    assert Path(f"{path}-wal").stat().st_size > 0
    path.unlink()

    with pytest.raises(SessionConflictError, match="removed or replaced"):
        backend.append(INFO, log.turn("three"), durable=True)
    backend.append(INFO, log.events, durable=True)
    backend.close()

    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    loaded = backends().load("s")
    assert loaded is not None and loaded.kept == len(log.events)


def test_a_replaced_database_is_opened_anew(
    path: Path, tmp_path: Path, backends: Callable[[], SqliteBackend]
) -> None:
    """Another database moved over the path (a restored backup, say): written from now
    on, its sessions kept; this session is stored in it whole, once refused."""
    log = LogBuilder()
    backend = backends()
    backend.append(INFO, log.turn("one"), durable=True)
    other_path = tmp_path / "other.sqlite3"
    other = SqliteBackend(other_path)
    other.append(SessionInfo("kept", 1.0), LogBuilder().turn("kept"), durable=True)
    other.close()  # its WAL checkpointed into the file and removed
    os.replace(other_path, path)

    with pytest.raises(SessionConflictError, match="removed or replaced"):
        backend.append(INFO, log.turn("two"), durable=True)
    backend.append(INFO, log.events, durable=True)

    fresh = backends()
    assert sorted(h.id for h in fresh.headers()) == ["kept", "s"]
    loaded = fresh.load("s")
    assert loaded is not None and loaded.kept == len(log.events)


async def test_a_session_whose_database_was_removed_mid_run_is_stored_again(
    tmp_path: Path,
) -> None:
    """The store removed between two turns: the next flush is refused (reported), and
    the one after it (here: the dispose's) stores the whole session in a new database."""
    settings = PersistenceSettings(backend="sqlite", directory=tmp_path / "sessions")
    plugins = [("persistence", PersistencePlugin(settings))]
    model = ScriptedModel([text("ok")] * 3)
    async with scripted_harness(model, plugins=plugins, load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "one")
        shutil.rmtree(tmp_path / "sessions")
        await run_turn(agent, "two")
    backend = SqliteBackend(settings.database_path())
    try:
        loaded = backend.load(agent.session.id)
    finally:
        backend.close()
    assert loaded is not None and loaded.kept == len(agent.session.events)


def test_a_claim_whose_lock_file_was_removed_is_lost_to_another_claim(
    path: Path, backends: Callable[[], SqliteBackend]
) -> None:
    one, two = backends(), backends()
    log = LogBuilder()
    one.append(INFO, log.turn("one"), durable=True)
    stored = len(log.events)
    assert one.claim("s") is True
    assert two.claim("s") is False
    lock = one._claims.path("s")
    shutil.rmtree(lock.parent)  # "stale" lock files tidied away
    assert two.claim("s") is True  # the lock file is gone: nothing stops this

    with pytest.raises(SessionInUseError, match="claim") as caught:
        one.append(INFO, log.turn("two"), durable=True)
    assert "'s'" in str(caught.value) and str(lock) in str(caught.value)
    assert one.claim("s") is False  # lost: the other process continues it
    loaded = two.load("s")
    assert loaded is not None and loaded.kept == stored


def test_releasing_a_claim_whose_lock_file_was_removed_leaves_anothers_alone(
    path: Path, backends: Callable[[], SqliteBackend]
) -> None:
    """The agent disposed without writing again: its release must not remove the lock
    file another process claimed the session with since."""
    one, two, three = backends(), backends(), backends()
    assert one.claim("s") is True
    shutil.rmtree(one._claims.path("s").parent)
    assert two.claim("s") is True
    one.release("s")
    assert three.claim("s") is False


def test_a_claim_whose_lock_file_was_removed_is_taken_again_when_free(
    path: Path, backends: Callable[[], SqliteBackend]
) -> None:
    one, two = backends(), backends()
    log = LogBuilder()
    assert one.claim("s") is True
    shutil.rmtree(one._claims.path("s").parent)

    one.append(INFO, log.turn("one"), durable=True)  # the claim taken again
    assert two.claim("s") is False
    one.release("s")
    assert two.claim("s") is True


def test_a_claim_before_prepare_creates_a_private_directory(path: Path) -> None:
    old = os.umask(0o022)
    try:
        backend = SqliteBackend(path)
        assert backend.claim("s") is True
        backend.close()
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
