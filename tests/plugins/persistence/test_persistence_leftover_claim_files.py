"""Lock files that a kill left in a SQLite store's claims directory are removed.

The SQLite backend claims a session by an empty lock file ``<digest>.lock`` in
``<database>-claims/``, and a writer holding no claim appends under its turn,
``<digest>.turn`` there (holding the session's claim meanwhile). Each is removed by its
holder as it lets go; a process killed outright (``kill -9``, the OOM killer) left them
for ever. Now they go as the JSONL backend's own do (test_persistence_leftover_claims.py,
test_persistence_leftover_turns.py): ``prepare()`` removes the ones no process holds once
``LEFTOVER_AGE`` old, a delete the session's turn at once. A held one is never removed,
and a claim (JSONL's too) that meets one being removed takes a new file.
(The PostgreSQL backend keeps no files: its claims are advisory locks that end with
their connection, test_persistence_postgres_claims.py.)
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
from claims_support import appended, appending_elsewhere, claimed_elsewhere, killed
from persistence_cli_support import run, store
from test_persistence_leftover_claims import age, made, names

from dsh_persistence import PersistenceSettings, SessionBackend, SessionInfo, open_backend
from dsh_persistence._claims import ClaimFiles
from dsh_persistence.testing import LogBuilder

pytestmark = [
    pytest.mark.plugins("persistence"),
    pytest.mark.skipif(os.name == "nt", reason="advisory locks are POSIX flock"),
]
sqlite_only = pytest.mark.parametrize("settings", ["sqlite"], indirect=True)
LIMIT = 10.0  # seconds: a thread waited for


def claims_of(settings: PersistenceSettings) -> ClaimFiles:
    database = settings.database_path()
    return ClaimFiles(database.with_name(database.name + "-claims"))


def stored(settings: PersistenceSettings, session_id: str = "s") -> None:
    log = LogBuilder()
    log.turn("one", calls=())
    store(settings, session_id, log)


def second_turn(backend: SessionBackend, session_id: str = "s") -> None:
    """The second turn of ``stored``'s session appended by ``backend``, holding no claim."""
    log = LogBuilder()
    log.turn("one", calls=())
    log.turn("two", calls=())
    backend.append(SessionInfo(session_id, 1.0), log.events[len(log.events) // 2 :], durable=True)


@sqlite_only
def test_a_killed_claimers_lock_file_is_removed_once_old(settings: PersistenceSettings) -> None:
    stored(settings)
    claims = claims_of(settings)
    with claimed_elsewhere(settings, "s") as holder:
        killed(holder)
    left = claims.path("s")
    assert names(claims.directory) == [left.name]

    open_backend(settings).prepare()  # young: maybe a claim being taken now
    assert left.exists()

    age(left)
    backend = open_backend(settings)
    try:
        backend.prepare()
        assert names(claims.directory) == []
        assert backend.claim("s")  # the session is free, claimed anew
        backend.release("s")
    finally:
        backend.close()
    assert names(claims.directory) == []


@sqlite_only
def test_a_killed_appenders_turn_and_claim_files_are_removed_once_old(
    settings: PersistenceSettings, config: Path
) -> None:
    stored(settings)
    claims = claims_of(settings)
    with appending_elsewhere(settings, "s") as appender:
        killed(appender)
    left = [claims.path("s"), claims.path("s", "turn")]
    assert names(claims.directory) == sorted(path.name for path in left)

    open_backend(settings).prepare()  # young: kept
    assert all(path.exists() for path in left)

    for path in left:
        age(path)
    backend = open_backend(settings)
    try:
        backend.prepare()
        assert names(claims.directory) == []
        second_turn(backend)  # its turn and claim, taken and let go
    finally:
        backend.close()
    assert names(claims.directory) == []
    assert run(config, "show", "s") == 0


@sqlite_only
def test_delete_removes_the_turn_file_a_kill_left(
    settings: PersistenceSettings, config: Path
) -> None:
    stored(settings)
    claims = claims_of(settings)
    with appending_elsewhere(settings, "s") as appender:  # young: a delete removes them
        killed(appender)

    assert run(config, "delete", "s") == 0

    assert names(claims.directory) == []


@sqlite_only
def test_a_held_turn_and_claim_are_never_removed(settings: PersistenceSettings) -> None:
    """However old: a live process's append (its turn and the claim it holds for it)
    outlives a prepare and a delete by another, which is refused."""
    stored(settings)
    claims = claims_of(settings)
    held = sorted([claims.path("s").name, claims.path("s", "turn").name])
    with appending_elsewhere(settings, "s") as appender:
        for name in held:
            age(claims.directory / name)
        backend = open_backend(settings)
        try:
            backend.prepare()
            assert names(claims.directory) == held
            with pytest.raises(Exception, match="continuing it"):
                backend.delete("s")
            assert names(claims.directory) == held
        finally:
            backend.close()
        appended(appender)
    assert names(claims.directory) == []  # let go by its holder


@sqlite_only
def test_only_lock_files_of_claims_are_touched(settings: PersistenceSettings) -> None:
    claims = claims_of(settings)
    claims.directory.mkdir(parents=True)
    digest = "0" * 40
    others = [f"{digest}.claim", f"{digest}.lock.bak", f"{digest[:39]}.lock", "notes.turn"]
    for name in others:
        age(made(claims.directory / name))
    target = claims.directory / "elsewhere"
    target.write_text("")
    (claims.directory / f"{'1' * 40}.lock").symlink_to(target)
    os.mkdir(claims.directory / f"{'2' * 40}.turn")

    open_backend(settings).prepare()

    assert names(claims.directory) == sorted(
        [*others, "elsewhere", f"{'1' * 40}.lock", f"{'2' * 40}.turn"]
    )


@pytest.mark.parametrize("settings", ["jsonl", "sqlite"], indirect=True)
def test_a_claim_taken_as_a_leftover_is_removed_is_granted(
    settings: PersistenceSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race: a claim opened the lock file a kill left, and tries its lock just while
    another process's ``prepare()`` holds it to remove it (locked, removed, not closed
    yet). The claim was refused, as if another process held the session, though none
    does; now it finds that the name leads nowhere and takes a new file."""
    from dsh_persistence import _claims

    left = left_by_a_kill(settings, "new")
    tried = _claims.try_lock_file
    removing: list[int] = []

    def removed_meanwhile(fd: int) -> bool:  # as remove_unheld, between open and close
        if not removing:
            removing.append(os.open(left, os.O_RDONLY))
            assert tried(removing[0])
            os.unlink(left)
        return tried(fd)

    monkeypatch.setattr(_claims, "try_lock_file", removed_meanwhile)
    backend = open_backend(settings)
    try:
        assert backend.claim("new")
        assert left.exists()  # a new file, held
    finally:
        backend.close()
        for fd in removing:
            os.close(fd)
    assert removing


@pytest.mark.parametrize("settings", ["jsonl", "sqlite"], indirect=True)
def test_a_claim_tried_while_a_leftover_is_locked_to_be_removed_is_granted(
    settings: PersistenceSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other race: another process's ``prepare()`` (``remove_unheld``) has locked the
    lock file a kill left and not removed it yet when the claim tries its lock. The claim
    was refused, though no process holds the session; now it tries again (a few short
    pauses) while the name still leads to the file, and meets the removal. Here the
    remover is a thread held between its lock and its removal until the claim's first
    try again."""
    from dsh_persistence import _claims, _leftovers

    left = left_by_a_kill(settings, "new")
    locked, go = threading.Event(), threading.Event()
    real_unlink, tried = os.unlink, _claims.try_lock_file
    remover = threading.Thread(target=_leftovers.remove_unheld, args=(left,))
    tries: list[bool] = []

    def paused_unlink(path: str | os.PathLike[str], *args: Any, **kwargs: Any) -> None:
        if threading.current_thread() is remover:
            locked.set()  # it holds the file's lock: a claim tried now is refused
            assert go.wait(LIMIT)
        real_unlink(path, *args, **kwargs)

    def tried_again(fd: int) -> bool:
        if tries:  # trying again: the remover goes on (it removes the file, closes it)
            go.set()
            remover.join(LIMIT)
        tries.append(tried(fd))
        return tries[-1]

    monkeypatch.setattr(os, "unlink", paused_unlink)
    monkeypatch.setattr(_claims, "try_lock_file", tried_again)
    remover.start()
    backend = open_backend(settings)
    try:
        assert locked.wait(LIMIT)
        assert backend.claim("new")
        assert tries[0] is False and left.exists()  # refused at first; a new file, held
    finally:
        go.set()
        remover.join(LIMIT)
        backend.close()


@pytest.mark.parametrize("settings", ["jsonl", "sqlite"], indirect=True)
def test_a_claim_held_by_another_is_refused_after_a_few_short_tries(
    settings: PersistenceSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dsh_persistence import _claims

    left = left_by_a_kill(settings, "new")
    holder = os.open(left, os.O_RDONLY)  # another open file: as another process's
    tried, tries = _claims.try_lock_file, []
    monkeypatch.setattr(_claims, "try_lock_file", lambda fd: tries.append(fd) or tried(fd))
    backend = open_backend(settings)
    try:
        assert _claims.try_lock_file(holder)
        tries.clear()
        assert not backend.claim("new")
    finally:
        backend.close()
        os.close(holder)
    assert len(tries) == 1 + len(_claims.BUSY_PAUSES)
    assert sum(_claims.BUSY_PAUSES) <= 0.05  # a claim held is refused all but at once


def left_by_a_kill(settings: PersistenceSettings, session_id: str) -> Path:
    """The lock file of a claim of ``session_id`` (not stored) that a kill left."""
    if settings.backend == "jsonl":
        left = settings.session_directory() / f".{session_id}.jsonl.claim"
    else:
        left = claims_of(settings).path(session_id)
    left.parent.mkdir(parents=True)
    return made(left)
