"""Turn lock files that a kill left in a JSONL store are removed.

A writer that holds no claim of a session (``dsh sessions delete``'s process, a second
harness) appends under its turn: an empty lock file ``.<name>.jsonl.lock`` beside the
session's file, removed once the append is done. A process killed outright mid-append
(``kill -9``, the OOM killer) left it for ever. Now it goes as a claim's lock file
goes (test_persistence_leftover_claims.py): ``prepare()`` removes the ones no process
holds once ``LEFTOVER_AGE`` old, a delete the session's own at once when no one holds
it. A turn held (an append going on, or waiting for it) is never removed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from claims_support import appended, appending_elsewhere, killed
from persistence_cli_support import run, store
from test_persistence_leftover_claims import age, made, names

from dsh_persistence import JsonlBackend, PersistenceSettings, SessionInfo, open_backend
from dsh_persistence.testing import LogBuilder

pytestmark = [
    pytest.mark.plugins("persistence"),
    pytest.mark.skipif(os.name == "nt", reason="advisory locks are POSIX flock"),
    pytest.mark.parametrize("settings", ["jsonl"], indirect=True),
]


def stored(settings: PersistenceSettings, session_id: str = "s") -> Path:
    log = LogBuilder()
    log.turn("one", calls=())
    store(settings, session_id, log)
    return settings.session_directory()


def killed_appending(settings: PersistenceSettings, session_id: str) -> Path:
    """The turn's lock file a process killed mid-append leaves."""
    with appending_elsewhere(settings, session_id) as appender:
        killed(appender)
    left = settings.session_directory() / f".{session_id}.jsonl.lock"
    assert left.exists()
    return left


def test_a_killed_appenders_turn_file_is_removed_once_old(
    settings: PersistenceSettings, config: Path
) -> None:
    directory = stored(settings)
    left = killed_appending(settings, "s")

    JsonlBackend(directory).prepare()  # young: kept, as a claim's (the same rule)
    assert left.exists()

    age(left)
    backend = open_backend(settings)
    try:
        backend.prepare()
        assert names(directory) == ["s.jsonl"]
        log = LogBuilder()
        log.turn("one", calls=())
        log.turn("two", calls=())
        half = len(log.events) // 2
        backend.append(SessionInfo("s", 1.0), log.events[half:], durable=True)  # its turn
    finally:
        backend.close()
    assert names(directory) == ["s.jsonl"]
    assert run(config, "show", "s") == 0


def test_delete_removes_the_turn_file_a_kill_left(
    settings: PersistenceSettings, config: Path
) -> None:
    directory = stored(settings)
    killed_appending(settings, "s")  # young: a delete removes its session's at once

    assert run(config, "delete", "s") == 0

    assert names(directory) == []


def test_a_held_turn_file_is_never_removed(settings: PersistenceSettings) -> None:
    """However old: a live process's append (it holds its turn) outlives a prepare and
    a delete by another; the delete waits for no turn and is refused by the file's lock,
    held for the append."""
    directory = stored(settings)
    with appending_elsewhere(settings, "s") as appender:
        turn = directory / ".s.jsonl.lock"
        age(turn)
        backend = open_backend(settings)
        try:
            backend.prepare()
            assert names(directory) == [".s.jsonl.lock", "s.jsonl"]
            with pytest.raises(Exception, match="being written by another process"):
                backend.delete("s")
            assert names(directory) == [".s.jsonl.lock", "s.jsonl"]
        finally:
            backend.close()
        appended(appender)
    assert names(directory) == ["s.jsonl"]  # let go by its holder


def test_only_turn_files_of_session_names_are_touched(settings: PersistenceSettings) -> None:
    directory = settings.session_directory()
    directory.mkdir(parents=True)
    others = [".notes.lock", ".x.jsonl.lock.bak", "x.jsonl.lock", ".a b.jsonl.lock"]
    for name in others:
        age(made(directory / name))
    target = directory / ".elsewhere"
    target.write_text("")
    (directory / ".linked.jsonl.lock").symlink_to(target)
    os.mkdir(directory / ".dir.jsonl.lock")

    JsonlBackend(directory).prepare()

    assert names(directory) == sorted(
        [*others, ".elsewhere", ".linked.jsonl.lock", ".dir.jsonl.lock"]
    )


def test_a_turn_being_taken_as_its_file_is_removed_takes_a_new_one(
    settings: PersistenceSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race: a writer opened the turn's file and has not locked it yet when another
    process, finding it unheld, removes it. Once locked, the writer finds the name leads
    nowhere and takes a new file, as after its last holder let it go: two writers never
    hold two files of one turn."""
    from dsh_persistence import _claims
    from dsh_persistence._files import leads_to
    from dsh_persistence._leftovers import remove_leftovers

    directory = stored(settings)
    turn = directory / ".s.jsonl.lock"
    made(turn)  # left by a kill
    locked = _claims.lock_file
    removed: list[bool] = []

    def removed_first(fd: int) -> None:  # between the writer's open and its lock
        if not removed:
            remove_leftovers(directory, of="s.jsonl", age=0)
            removed.append(not turn.exists())
        locked(fd)

    monkeypatch.setattr(_claims, "lock_file", removed_first)
    held = _claims.hold_lock_file(turn, wait=True)
    assert held is not None and removed == [True]
    try:
        assert leads_to(turn, held)  # a new file, the one the name leads to
        remove_leftovers(directory, of="s.jsonl", age=0)
        assert turn.exists()  # held: kept
    finally:
        _claims.let_go(turn, held)
    assert names(directory) == ["s.jsonl"]
