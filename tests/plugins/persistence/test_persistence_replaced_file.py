"""A JSONL session file deleted and stored anew while another backend opens, locks or
holds it.

A file's ``flock`` belongs to the open file, not to the path: a lock taken on a file
opened before the session was deleted and stored anew holds the deleted file, and the
new one stays free. So every step that opens the path and then locks what it opened
must check, once locked, that the path still leads there: a delete (``dsh sessions
delete``) that locked the old file removed the new one, claimed by another process, and
a claim that locked the old file let a second process claim the new one, the two then
writing one log. A claim holder, which opens the path anew for each append, must write
only into the file its claim holds.

The race is stopped in its window by a patch of ``try_lock_file`` in
``_jsonl_locks``: the path is opened, the lock not yet taken. Two backends in one
process meet each other's locks as two processes do (``flock`` locks belong to an
open file).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dsh_persistence import (
    JsonlBackend,
    SessionConflictError,
    SessionInfo,
    SessionInUseError,
    _jsonl_locks,
)
from dsh_persistence.testing import LogBuilder

pytestmark = [
    pytest.mark.plugins("persistence"),
    pytest.mark.skipif(os.name == "nt", reason="advisory locks are POSIX flock"),
]

OLD = SessionInfo("s", 1_700_000_000.0, {}, "/w", "old")
NEW = SessionInfo("s", 1_800_000_000.0, {}, "/w", "new")


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


@pytest.fixture
def backends(directory: Path) -> Iterator[Callable[[], JsonlBackend]]:
    """New backends over ``directory`` (each as another process), closed at the end."""
    made: list[JsonlBackend] = []

    def new() -> JsonlBackend:
        made.append(JsonlBackend(directory))
        return made[-1]

    yield new
    for backend in made:
        backend.close()


def in_the_window(monkeypatch: pytest.MonkeyPatch, meanwhile: Callable[[], None]) -> None:
    """Run ``meanwhile`` once, at the next lock a backend tries to take without waiting
    (the path is opened, the lock not yet taken)."""
    real = _jsonl_locks.try_lock_file
    fired: list[bool] = []

    def try_lock_file(fd: int) -> bool:
        if not fired:
            fired.append(True)
            meanwhile()
        return real(fd)

    monkeypatch.setattr(_jsonl_locks, "try_lock_file", try_lock_file)


def old_and_new() -> tuple[LogBuilder, LogBuilder]:
    old, new = LogBuilder(), LogBuilder(start=1_800_000_000.0)
    old.turn("one")
    old.turn("two")
    new.turn("new one")
    new.turn("new two")
    return old, new


def test_a_delete_that_meets_a_claimed_new_file_is_refused(
    directory: Path, backends: Callable[[], JsonlBackend], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deleter opened the old file; meanwhile another process deleted it and a new
    agent stored the session anew, holding its claim. Locking the old file, the
    deleter removed the claimed new one: the live session's stored log was gone."""
    old, new = old_and_new()
    backends().append(OLD, old.events, durable=True)
    holder = backends()

    def replace() -> None:
        assert backends().delete("s")
        assert holder.claim("s")
        holder.append(NEW, new.events[:9], durable=True)

    in_the_window(monkeypatch, replace)
    with pytest.raises(SessionInUseError, match="continuing it"):
        backends().delete("s")

    holder.append(NEW, new.events[9:], durable=True)  # the claim still holds its file
    loaded = backends().load("s")
    assert loaded is not None
    assert (loaded.stored.created, loaded.kept) == (NEW.created, len(new.events))


def test_a_claim_that_meets_a_new_file_claims_that_one(
    directory: Path, backends: Callable[[], JsonlBackend], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The claimer opened the old file; meanwhile it was deleted and the session stored
    anew. Locking the old file, the claim left the new one free: a second process
    claimed it too, and both wrote one log."""
    old, new = old_and_new()
    backends().append(OLD, old.events, durable=True)
    claimer = backends()

    def replace() -> None:
        assert backends().delete("s")
        backends().append(NEW, new.events[:9], durable=True)

    in_the_window(monkeypatch, replace)
    assert claimer.claim("s")
    monkeypatch.undo()

    assert not backends().claim("s")  # the new file is the claimer's
    with pytest.raises(SessionInUseError):
        backends().append(NEW, new.events[9:], durable=True)
    claimer.append(NEW, new.events[9:], durable=True)
    loaded = backends().load("s")
    assert loaded is not None
    assert loaded.kept == len(new.events)


def test_a_claim_holder_never_writes_into_a_file_that_replaced_its_own(
    directory: Path, backends: Callable[[], JsonlBackend]
) -> None:
    """Something that takes no lock (``rm``, a version before claims) removed the
    claimed file and another writer stored the session anew, as long: the holder's
    next append went into that file, its events after another session's."""
    old, new = old_and_new()
    backends().append(OLD, old.events[:9], durable=True)
    holder = backends()
    assert holder.claim("s")
    assert holder.tail("s") is not None
    os.unlink(directory / "s.jsonl")
    backends().append(NEW, new.events[:9], durable=True)

    with pytest.raises(SessionConflictError) as refused:
        holder.append(OLD, old.events[9:], durable=True)

    message = str(refused.value)
    assert "'s'" in message
    assert "replaced" in message
    assert "nothing was written" in message
    loaded = backends().load("s")
    assert loaded is not None
    assert (loaded.stored.created, loaded.kept) == (NEW.created, 9)
    assert [e.to_dict() for e in loaded.stored.events[:9]] == [e.to_dict() for e in new.events[:9]]


def test_a_claimed_session_deleted_by_its_holder_and_stored_anew_stays_claimed(
    directory: Path, backends: Callable[[], JsonlBackend]
) -> None:
    """The holder's own delete left its claim on the removed file: the session stored
    anew was in no one's claim, and another process could claim it and write too."""
    old, _ = old_and_new()
    holder = backends()
    assert holder.claim("s")
    holder.append(OLD, old.events[:9], durable=True)
    assert holder.delete("s")

    holder.append(OLD, old.events[:9], durable=True)  # the whole log again, from seq 0

    assert not backends().claim("s")
    holder.append(OLD, old.events[9:], durable=True)
    loaded = backends().load("s")
    assert loaded is not None
    assert loaded.kept == len(old.events)
