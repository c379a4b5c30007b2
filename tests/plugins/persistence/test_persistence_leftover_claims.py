"""Lock files of claims that a kill left in a JSONL store are removed.

A session not stored yet is claimed by an empty lock file ``.<name>.jsonl.claim`` beside
where its file will be, removed once the file is made. A process killed outright (``kill
-9``, the OOM killer, a power loss) before its first save left it for ever, one per such
agent (session ids are mostly random, so no later claim takes it over); so did a kill
between the session file's link and the lock file's removal, and ``dsh sessions delete``
of that session (by a process holding no claim) left it too. Now ``prepare()`` removes
the ``.claim`` files no process holds once they are ``LEFTOVER_AGE`` old (as the temp
files of test_persistence_leftover_temp.py: holding a young one's lock even for an
instant could refuse a claim being taken at that moment), and a delete removes the
session's own at once when no one holds it. A held claim is never removed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from claims_support import claimed_elsewhere, killed
from persistence_cli_support import run, store

from dsh_persistence import JsonlBackend, PersistenceSettings, SessionInfo, open_backend
from dsh_persistence._claims import hold_lock_file, let_go
from dsh_persistence._leftovers import LEFTOVER_AGE
from dsh_persistence.testing import LogBuilder

pytestmark = [
    pytest.mark.plugins("persistence"),
    pytest.mark.skipif(os.name == "nt", reason="advisory locks are POSIX flock"),
    pytest.mark.parametrize("settings", ["jsonl"], indirect=True),
]


def killed_holding(settings: PersistenceSettings, session_id: str) -> Path:
    """A real process claims ``session_id`` (not stored) and is killed with SIGKILL:
    the claim's lock file it leaves."""
    with claimed_elsewhere(settings, session_id) as holder:
        killed(holder)
    left = settings.session_directory() / f".{session_id}.jsonl.claim"
    assert left.exists()
    return left


def age(path: Path, seconds: float = LEFTOVER_AGE + 5) -> None:
    """Make ``path`` look ``seconds`` old (rather than wait that long)."""
    when = path.stat().st_mtime - seconds
    os.utime(path, (when, when))


def made(path: Path, content: bytes = b"") -> Path:
    """``path`` made holding ``content`` as dsh makes its temp and lock files: 0600
    (one that others may read is another program's, kept: test_persistence_leftover_foreign.py)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, content)
    finally:
        os.close(fd)
    return path


def names(directory: Path) -> list[str]:
    return sorted(entry.name for entry in directory.iterdir())


def test_a_killed_processs_claim_file_is_removed_once_old(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = settings.session_directory()
    log = LogBuilder()
    log.turn("kept", calls=())
    store(settings, "kept", log)
    left = killed_holding(settings, "a1b2c3")

    JsonlBackend(directory).prepare()  # young: maybe a claim being taken now
    assert left.exists()

    age(left)
    assert run(config, "list", "--json") == 0  # never shown, and listing is unchanged
    assert [row["id"] for row in json.loads(capsys.readouterr().out)] == ["kept"]

    backend = open_backend(settings)
    try:
        backend.prepare()
        assert names(directory) == ["kept.jsonl"]
        assert backend.claim("a1b2c3")  # the session is free, claimed anew
        backend.release("a1b2c3")
    finally:
        backend.close()
    assert run(config, "list", "--json") == 0
    assert [row["id"] for row in json.loads(capsys.readouterr().out)] == ["kept"]


def test_a_held_claim_file_is_never_removed(settings: PersistenceSettings) -> None:
    """However old: a live agent's claim of a session not stored yet (another process's,
    or this one's), and a first save going on (it holds the file)."""
    directory = settings.session_directory()
    mine, theirs = open_backend(settings), open_backend(settings)
    try:
        mine.prepare()
        assert mine.claim("live")
        claim = directory / ".live.jsonl.claim"
        age(claim)
        held = hold_lock_file(directory / ".other.jsonl.claim", wait=False)
        assert held is not None
        age(directory / ".other.jsonl.claim")

        theirs.prepare()
        mine.prepare()
        assert names(directory) == [".live.jsonl.claim", ".other.jsonl.claim"]
        assert not theirs.claim("live")
        mine.append(SessionInfo("live", 1.0), LogBuilder().turn("one"), durable=True)
        let_go(directory / ".other.jsonl.claim", held)
    finally:
        mine.close()
        theirs.close()
    assert names(directory) == ["live.jsonl"]


def test_only_claim_files_of_session_names_are_touched(settings: PersistenceSettings) -> None:
    directory = settings.session_directory()
    directory.mkdir(parents=True)
    others = [".notes.claim", ".x.jsonl.claim.bak", "x.jsonl.claim", ".a b.jsonl.claim"]
    for name in others:
        age(made(directory / name))
    target = directory / ".elsewhere"
    target.write_text("")
    link = directory / ".linked.jsonl.claim"
    link.symlink_to(target)
    os.mkdir(directory / ".dir.jsonl.claim")

    JsonlBackend(directory).prepare()

    assert names(directory) == sorted(
        [*others, ".elsewhere", ".linked.jsonl.claim", ".dir.jsonl.claim"]
    )


def test_delete_removes_a_claim_file_a_kill_left_beside_a_stored_session(
    settings: PersistenceSettings, config: Path
) -> None:
    """A kill between the session file's link and the removal of its claim's file left
    both; ``dsh sessions delete`` (which holds no claim) removed only the session file."""
    directory = settings.session_directory()
    log = LogBuilder()
    log.turn("one", calls=())
    store(settings, "s", log)
    made(directory / ".s.jsonl.claim")  # young: a delete removes its session's at once

    assert run(config, "delete", "s") == 0

    assert names(directory) == []


def test_delete_keeps_a_claim_file_another_holds(settings: PersistenceSettings) -> None:
    directory = settings.session_directory()
    log = LogBuilder()
    log.turn("one", calls=())
    store(settings, "s", log)
    held = hold_lock_file(directory / ".s.jsonl.claim", wait=False)
    assert held is not None
    backend = open_backend(settings)
    try:
        assert backend.delete("s")
        assert names(directory) == [".s.jsonl.claim"]
    finally:
        backend.close()
        let_go(directory / ".s.jsonl.claim", held)
    assert names(directory) == []
