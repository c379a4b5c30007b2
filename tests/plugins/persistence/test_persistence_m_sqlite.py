"""SQLite backend details the other tests leave open: the listed turn count across
batches, the schema version boundary, a refused database left unchanged, errors as
``PersistenceError``, text SQLite cannot take as UTF-8, and commit durability."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from dsh.session import SessionEvent
from dsh_persistence import (
    JsonlBackend,
    PersistenceError,
    PersistenceSettings,
    SessionFormatError,
    SessionInfo,
    SqliteBackend,
    open_backend,
)
from dsh_persistence._sqlite_schema import APPLICATION_ID
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")


def test_headers_keep_the_turn_count_when_a_batch_starts_no_turn(tmp_path: Path) -> None:
    """A checkpoint in the middle of a turn stores events with no ``turn/start``: the
    session is still listed with the turns it has."""
    log = LogBuilder()
    log.turn("one")
    log.turn("two")
    log.add("turn/start", {"turn": 3})
    log.add("user/message", {"content": "three"})
    log.add("note", {})
    backend = SqliteBackend(tmp_path / "db.sqlite3")
    try:
        backend.append(SessionInfo("s", 1.0), log.events[:-1], durable=False)
        backend.append(SessionInfo("s", 1.0), log.events[-1:], durable=True)
        (header,) = backend.headers()
    finally:
        backend.close()
    assert header.turns == 3
    assert header.updated == log.events[-1].time


def newer_database(path: Path, version: int) -> None:
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY)")
        db.execute(f"PRAGMA application_id={APPLICATION_ID}")  # dsh's mark, as dsh made it
        db.execute(f"PRAGMA user_version={version}")


def test_b43_schema_version_2_is_refused_and_the_database_left_unchanged(tmp_path: Path) -> None:
    """The first newer schema is refused too (not only far newer ones), saying so, and
    the database file is not changed: not even switched to the WAL journal."""
    path = tmp_path / "db.sqlite3"
    newer_database(path, 2)
    before = path.read_bytes()

    backend = SqliteBackend(path)
    try:
        with pytest.raises(SessionFormatError, match="version 2 is newer"):
            backend.load("s")
    finally:
        backend.close()
    assert path.read_bytes() == before
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_b43_jsonl_format_version_2_is_refused(tmp_path: Path) -> None:
    """A session file one version newer than this code reads is refused with the
    documented message, and left as it is."""
    path = tmp_path / "s.jsonl"
    path.write_text('{"format":"dsh-session","version":2,"id":"s"}\n')
    with pytest.raises(SessionFormatError, match="session format version 2 is newer"):
        JsonlBackend(tmp_path).load("s")
    assert path.read_text() == '{"format":"dsh-session","version":2,"id":"s"}\n'


def test_a_locked_database_is_a_persistence_error_naming_it(tmp_path: Path) -> None:
    """A database another process keeps locked past the timeout fails the write with a
    ``PersistenceError`` (code ``PERSISTENCE``) that names the file, never a bare
    ``sqlite3`` exception; nothing is stored."""
    path = tmp_path / "db.sqlite3"
    backend = SqliteBackend(path, timeout=0.05)
    event = SessionEvent("note", 0, 1.0, {})
    try:
        backend.append(SessionInfo("a", 1.0), [event], durable=True)
        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute("BEGIN IMMEDIATE")  # the other writer holds the write lock
            with pytest.raises(PersistenceError, match="locked") as caught:
                backend.append(SessionInfo("b", 1.0), [event], durable=True)
            other.execute("ROLLBACK")
        assert type(caught.value) is PersistenceError
        assert str(path) in str(caught.value)
        assert backend.tail("b") is None
    finally:
        backend.close()


def test_lone_surrogates_in_the_meta_are_stored_exactly(settings: PersistenceSettings) -> None:
    """Meta holding a lone surrogate (bytes that were not UTF-8, e.g. a file name) is
    stored and read back exactly by every backend: not refused by SQLite's UTF-8 text,
    not replaced in the JSONL header."""
    meta = {"file": "caf\udce9.txt"}
    backend = open_backend(settings)
    try:
        backend.append(SessionInfo("s", 1.0, meta), [SessionEvent("n", 0, 1.0, {})], durable=True)
        loaded = backend.load("s")
    finally:
        backend.close()
    assert loaded is not None and loaded.stored.meta == meta


def test_a_directory_where_the_database_should_be_is_named_as_such(tmp_path: Path) -> None:
    """The message says the database path is a directory (not a generic open failure)."""
    path = tmp_path / "db.sqlite3"
    path.mkdir()
    backend = SqliteBackend(path, source="persistence.database")
    with pytest.raises(PersistenceError) as caught:
        backend.headers()
    message = str(caught.value)
    assert str(path) in message
    assert "(persistence.database)" in message
    assert "it is a directory" in message


def synchronous(backend: SqliteBackend) -> int:
    """The connection's ``PRAGMA synchronous`` (1 NORMAL, 2 FULL), read on the backend's
    own connection (the setting is per connection)."""
    return int(backend._run(lambda db: db.execute("PRAGMA synchronous").fetchone()[0]))


def test_durable_appends_commit_with_synchronous_full(tmp_path: Path) -> None:
    """docs/persistence.md: "Durable appends commit with synchronous=FULL, others with
    NORMAL" (with ``fsync: never``, nothing waits for the disk)."""
    log = LogBuilder()
    log.turn("one")
    backend = SqliteBackend(tmp_path / "db.sqlite3")
    lazy = SqliteBackend(tmp_path / "lazy.sqlite3", fsync=False)
    try:
        backend.append(SessionInfo("s", 1.0), log.events[:3], durable=True)
        assert synchronous(backend) == 2
        backend.append(SessionInfo("s", 1.0), log.events[3:6], durable=False)
        assert synchronous(backend) == 1
        backend.append(SessionInfo("s", 1.0), log.events[6:], durable=True)
        assert synchronous(backend) == 2
        lazy.append(SessionInfo("s", 1.0), log.events, durable=True)
        assert synchronous(lazy) == 1
    finally:
        backend.close()
        lazy.close()
