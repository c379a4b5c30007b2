"""A dsh database created before ``PRAGMA application_id`` is marked when it is first
written, never by a read: ``dsh sessions list`` and ``show`` change nothing in it, and
read one that this process may not write (another user's file, mode 644).

Before: the first connection marked it, reads too, so listing a read-only one failed
with "attempt to write a readonly database" and listing a writable one changed it."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from unprivileged import as_file_modes_say

from dsh.cli import main
from dsh.session import SessionEvent
from dsh_persistence import SessionInfo, SqliteBackend
from dsh_persistence._sqlite_schema import APPLICATION_ID

pytestmark = pytest.mark.plugins("persistence")


def saved(backend: SqliteBackend, session_id: str, seq: int = 0) -> None:
    event = SessionEvent("note", seq, 2.0 + seq, {"by": "test"})
    backend.append(SessionInfo(session_id, 1.0), [event], durable=True)


def before_the_mark(path: Path) -> None:
    """A database as dsh wrote it before the mark: a session in it, ``application_id`` 0."""
    backend = SqliteBackend(path)
    try:
        saved(backend, "old")
    finally:
        backend.close()
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA application_id=0")
        db.commit()


def application_id(path: Path) -> int:
    with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as db:
        return int(db.execute("PRAGMA application_id").fetchone()[0])


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_reads_leave_a_database_from_before_the_mark_unmarked(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    before_the_mark(path)
    before = sha(path)
    backend = SqliteBackend(path)
    try:
        backend.prepare()
        assert [h.id for h in backend.headers()] == ["old"]
        assert backend.load("old") is not None and backend.tail("old") is not None
        assert application_id(path) == 0 and sha(path) == before
        saved(backend, "new")  # the first write marks it
    finally:
        backend.close()
    assert application_id(path) == APPLICATION_ID


@pytest.mark.parametrize("command", ["list", "show old"])
def test_the_sessions_commands_leave_it_unmarked(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    monkeypatch.delenv("DSH_PERSISTENCE_DIR", raising=False)
    path = tmp_path / "s.sqlite3"
    before_the_mark(path)
    before = sha(path)
    config = tmp_path / "dsh.yml"
    config.write_text(f"persistence: {{backend: sqlite, database: {path}}}\n")
    assert main(["-c", str(config), "sessions", *command.split()]) == 0
    assert application_id(path) == 0 and sha(path) == before


def test_a_read_only_database_from_before_the_mark_is_read(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    before_the_mark(path)
    os.chmod(path, 0o444)
    backend = SqliteBackend(path)
    try:
        with as_file_modes_say():
            assert [h.id for h in backend.headers()] == ["old"]
            assert backend.load("old") is not None
    finally:
        backend.close()
    assert application_id(path) == 0
