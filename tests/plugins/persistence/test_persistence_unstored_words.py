"""A save that fails says which events it did not store and that the running session
keeps them, whatever the store: SQLite said so (test_persistence_sqlite_full_disk),
JSONL and PostgreSQL said only why the write failed ("<path>: cannot append to the
session file: No space left on device"), leaving a user to wonder whether the
conversation was lost."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest

from dsh_persistence import JsonlBackend, PersistenceError, PostgresBackend, SessionInfo
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

INFO = SessionInfo("s", 1.0)


def full_disk(monkeypatch: pytest.MonkeyPatch, room: int) -> None:
    """Let each write take ``room`` more bytes at most, then fail as a full disk does."""
    pwrite = os.pwrite
    left = [room]

    def limited(fd: int, data: Any, offset: int) -> int:
        if not left[0]:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = pwrite(fd, memoryview(data)[: left[0]], offset)
        left[0] -= n
        return n

    monkeypatch.setattr(os, "pwrite", limited)


def test_a_jsonl_append_on_a_full_disk_says_what_may_be_unstored_and_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = JsonlBackend(tmp_path)
    log = LogBuilder()
    log.turn("hello")
    stored = len(log.events)
    backend.append(INFO, log.events, durable=True)
    log.turn("again")
    with monkeypatch.context() as patch:
        full_disk(patch, 10)  # a torn line: a write may store some events of a batch
        with pytest.raises(PersistenceError) as caught:
            backend.append(INFO, log.events[stored:], durable=True)
    path = tmp_path / "s.jsonl"
    assert str(caught.value) == (
        f"{path}: cannot append to the session file: No space left on device; events seq "
        f"{stored}-{len(log.events) - 1} of session 's' not stored, or not all of them "
        "(the running session keeps them; its next save stores what is missing)"
    )
    backend.append(INFO, log.events[stored:], durable=True)  # the torn line is replaced
    loaded = backend.load("s")
    assert loaded is not None and loaded.stored.events == log.events


def test_a_jsonl_session_file_not_created_says_its_events_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = JsonlBackend(tmp_path)
    log = LogBuilder()
    log.turn("hello")
    with monkeypatch.context() as patch:
        full_disk(patch, 0)
        with pytest.raises(PersistenceError) as caught:
            backend.append(INFO, log.events, durable=True)
    assert str(caught.value) == (
        f"{tmp_path / 's.jsonl'}: cannot create the session file: No space left on device; "
        f"events seq 0-{len(log.events) - 1} of session 's' not stored (the running "
        "session keeps them; its next save tries again)"
    )
    assert backend.load("s") is None


def test_a_postgresql_write_the_server_refuses_says_its_events_are_kept(pg_url: str) -> None:
    import psycopg

    backend = PostgresBackend(pg_url)
    try:
        log = LogBuilder()
        log.turn("hello")
        backend.append(INFO, log.events[:1], durable=True)
        with psycopg.connect(pg_url, autocommit=True) as db:
            db.execute(
                "CREATE FUNCTION disk_full() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "RAISE EXCEPTION 'could not extend file: No space left on device' "
                "USING HINT = 'Check free disk space.'; END $$"
            )
            db.execute(
                "CREATE TRIGGER disk_full BEFORE INSERT ON dsh_events FOR EACH ROW "
                "EXECUTE FUNCTION disk_full()"
            )
        with pytest.raises(PersistenceError) as caught:
            backend.append(INFO, log.events[1:], durable=True)
        said = str(caught.value)
        # on one line, as every message of the backend (psycopg puts the hint on its own)
        assert said.startswith(
            f"{pg_url}: could not extend file: No space left on device HINT:  Check free "
            "disk space. CONTEXT: "
        )
        assert said.endswith(
            f"; events seq 1-{len(log.events) - 1} of session 's' not stored (the running "
            "session keeps them; its next save tries again)"
        )
    finally:
        backend.close()


def test_a_postgresql_server_not_reached_says_the_events_are_kept(pg_server: Any) -> None:
    from pg_server import free_port

    url = f"postgresql://postgres@127.0.0.1:{free_port()}/postgres"  # no server there
    backend = PostgresBackend(url)
    log = LogBuilder()
    log.turn("hello")
    try:
        with pytest.raises(PersistenceError) as caught:
            backend.append(INFO, log.events, durable=True)
    finally:
        backend.close()
    said = str(caught.value)
    assert said.startswith(f"{url}: cannot connect to the session database: ")
    assert said.endswith(
        f"; events seq 0-{len(log.events) - 1} of session 's' not stored (the running "
        "session keeps them; its next save tries again)"
    )


def _refused(errno_: int) -> Any:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno_, os.strerror(errno_))

    return fail


def _kept(log: LogBuilder, first: int) -> str:
    return (
        f"events seq {first}-{len(log.events) - 1} of session 's' not stored (the running "
        "session keeps them; its next save tries again)"
    )


def test_a_jsonl_session_file_not_opened_to_append_says_its_events_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dsh_persistence import _jsonl_locks

    backend = JsonlBackend(tmp_path)
    log = LogBuilder()
    log.turn("hello")
    stored = len(log.events)
    backend.append(INFO, log.events, durable=True)
    log.turn("again")
    with monkeypatch.context() as patch:
        patch.setattr(_jsonl_locks, "open_regular", _refused(errno.EACCES))
        with pytest.raises(PersistenceError) as caught:
            backend.append(INFO, log.events[stored:], durable=True)
    assert str(caught.value) == (
        f"{tmp_path / 's.jsonl'}: cannot open the session file: Permission denied; "
        + _kept(log, stored)
    )
    backend.append(INFO, log.events[stored:], durable=True)  # its next save stores them
    loaded = backend.load("s")
    assert loaded is not None and loaded.stored.events == log.events


@pytest.mark.parametrize("where", ["turn", "file"])
def test_a_jsonl_session_file_not_locked_to_append_says_its_events_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    from dsh_persistence import _jsonl_locks

    backend = JsonlBackend(tmp_path)
    log = LogBuilder()
    log.turn("hello")
    stored = len(log.events)
    backend.append(INFO, log.events, durable=True)
    log.turn("again")
    path = tmp_path / "s.jsonl"
    with monkeypatch.context() as patch:  # a file system without locks (ENOLCK)
        failing = "hold_lock_file" if where == "turn" else "try_lock_file"
        patch.setattr(_jsonl_locks, failing, _refused(errno.ENOLCK))
        with pytest.raises(PersistenceError) as caught:
            backend.append(INFO, log.events[stored:], durable=True)
    said = (
        f"{tmp_path / '.s.jsonl.lock'}: cannot lock it to append to the session"
        if where == "turn"
        else f"{path}: cannot lock the session file"
    )
    assert str(caught.value) == f"{said}: No locks available; " + _kept(log, stored)


def test_a_jsonl_session_not_locked_to_store_says_its_events_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dsh_persistence import _jsonl_locks

    backend = JsonlBackend(tmp_path)
    log = LogBuilder()
    log.turn("hello")
    with monkeypatch.context() as patch:
        patch.setattr(_jsonl_locks, "hold_lock_file", _refused(errno.ENOLCK))
        with pytest.raises(PersistenceError) as caught:
            backend.append(INFO, log.events, durable=True)
    assert str(caught.value) == (
        f"{tmp_path / '.s.jsonl.claim'}: cannot lock it to store the session: No locks "
        "available; " + _kept(log, 0)
    )
    backend.append(INFO, log.events, durable=True)
    loaded = backend.load("s")
    assert loaded is not None and loaded.stored.events == log.events
