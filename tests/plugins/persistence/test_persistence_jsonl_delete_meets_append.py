"""A JSONL delete and an append by a writer holding no claim, each meeting the other's
lock of the session file (neither holds a claim): the delete is told the session is
being written (try again), not that another process continues it; the append meets a
delete that removes the file and is told so (``SessionDeletedError``), not that the
session is in use. Nothing is timed: the other's lock is held by an open file here."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import dsh_persistence._claims as claims
from dsh_persistence import JsonlBackend, SessionDeletedError, SessionInfo, SessionInUseError
from dsh_persistence._claims import hold_lock_file, let_go
from dsh_persistence._files import try_lock_file
from dsh_persistence._jsonl_locks import turn_path
from dsh_persistence.testing import LogBuilder

pytestmark = [
    pytest.mark.plugins("persistence"),
    pytest.mark.skipif(os.name == "nt", reason="advisory locks are POSIX flock"),
]


def stored(directory: Path) -> tuple[JsonlBackend, LogBuilder]:
    log = LogBuilder()
    log.turn("first")
    backend = JsonlBackend(directory)
    backend.append(SessionInfo("s", 1.0), log.events, durable=True)
    return backend, log


def test_a_delete_meeting_an_append_without_a_claim_says_it_is_being_written(
    tmp_path: Path,
) -> None:
    backend, _ = stored(tmp_path)
    path = backend.path("s")
    turn = hold_lock_file(turn_path(path), wait=True)  # another process's append: its
    assert turn is not None  # turn, then the file's lock, as it writes
    writing = os.open(path, os.O_WRONLY)
    try:
        assert try_lock_file(writing)
        with pytest.raises(SessionInUseError) as refused:
            JsonlBackend(tmp_path).delete("s")
        assert "being written by another process" in str(refused.value)
        assert "try again" in str(refused.value)
        assert "continuing" not in str(refused.value)
    finally:
        os.close(writing)
        let_go(turn_path(path), turn)
        backend.close()
    assert path.exists()


def test_a_delete_meeting_a_claim_says_another_continues_it(tmp_path: Path) -> None:
    backend, _ = stored(tmp_path)
    try:
        assert backend.claim("s")
        with pytest.raises(SessionInUseError, match="continuing it"):
            JsonlBackend(tmp_path).delete("s")
    finally:
        backend.close()


@contextmanager
def a_delete_under_way(
    directory: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Path, LogBuilder]]:
    """Session "s" stored in ``directory`` (its file and log given), and another
    process's delete of it under way: it holds the file's lock, and removes the file as
    this process tries that lock."""
    backend, log = stored(directory)
    path = backend.path("s")
    deleting = os.open(path, os.O_RDONLY)
    try:
        assert try_lock_file(deleting)
        tried = claims.try_lock_file

        def try_lock(fd: int) -> bool:
            held = tried(fd)
            if not held and path.exists():
                os.unlink(path)
            return held

        monkeypatch.setattr(claims, "try_lock_file", try_lock)
        yield path, log
    finally:
        os.close(deleting)
        backend.close()


def test_an_append_meeting_a_delete_says_it_was_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with a_delete_under_way(tmp_path, monkeypatch) as (path, log):
        appender = JsonlBackend(tmp_path)
        try:
            with pytest.raises(SessionDeletedError):
                appender.append(SessionInfo("s", 1.0), log.turn("second"), durable=True)
        finally:
            appender.close()
    assert not path.exists()


def test_a_delete_meeting_another_delete_finds_nothing_to_delete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with a_delete_under_way(tmp_path, monkeypatch):
        assert JsonlBackend(tmp_path).delete("s") is False  # not "in use"
