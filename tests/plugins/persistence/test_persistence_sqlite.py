"""What is particular to the SQLite backend: WAL, several processes on one database."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from pathlib import Path

import pytest

from dsh_persistence import PersistenceSettings, SessionInfo, SqliteBackend, open_backend
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

WRITER = textwrap.dedent(
    """
    import sys
    from dsh_persistence import SessionInfo, SqliteBackend
    from dsh_persistence.testing import LogBuilder

    path, session_id = sys.argv[1], sys.argv[2]
    log = LogBuilder()
    for n in range(40):
        log.turn(f"{session_id} {n}")
    backend = SqliteBackend(path)
    for start in range(0, len(log.events), 7):
        backend.append(SessionInfo(session_id, 1.0), log.events[start : start + 7], durable=False)
    backend.close()
    """
)


def test_the_database_uses_the_wal_journal(tmp_path: Path) -> None:
    backend = SqliteBackend(tmp_path / "s.sqlite3")
    backend.append(SessionInfo("s", 1.0), LogBuilder().turn(), durable=True)
    backend.close()

    with closing(sqlite3.connect(tmp_path / "s.sqlite3")) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA user_version").fetchone()[0] == 1


def test_the_database_setting_chooses_the_file(tmp_path: Path) -> None:
    settings = PersistenceSettings(backend="sqlite", database=tmp_path / "elsewhere.db")
    backend = open_backend(settings)
    backend.append(SessionInfo("s", 1.0), LogBuilder().turn(), durable=True)
    backend.close()
    assert (tmp_path / "elsewhere.db").is_file()


def test_several_processes_write_one_database_at_once(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    SqliteBackend(path).close()
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), f"p{n}"]) for n in range(3)
    ]
    reader = SqliteBackend(path)
    try:
        while any(writer.poll() is None for writer in writers):
            reader.headers()  # reading while they write never blocks them or fails
        assert [writer.wait() for writer in writers] == [0, 0, 0]

        for n in range(3):
            expected = LogBuilder()
            for turn in range(40):
                expected.turn(f"p{n} {turn}")
            loaded = reader.load(f"p{n}")
            assert loaded is not None and loaded.closers == 0
            stored = [e.to_dict() for e in loaded.stored.events]
            assert stored == [e.to_dict() for e in expected.events]
        assert sorted(h.turns for h in reader.headers()) == [40, 40, 40]
    finally:
        reader.close()


def test_processes_opening_a_new_database_at_once_all_get_it(tmp_path: Path) -> None:
    """Switching a new database to WAL needs it to itself and SQLite does not wait for
    that: openers that collide retry instead of failing with "database is locked"."""
    import threading

    errors: list[str] = []

    def open_it(backend: SqliteBackend) -> None:
        try:
            backend.append(SessionInfo("s", 0.0, {}), [], durable=False)
            backend.headers()
        except Exception as exc:  # reported below
            errors.append(f"{type(exc).__name__}: {exc}")

    for attempt in range(300):
        backends = [SqliteBackend(tmp_path / f"{attempt}.sqlite3") for _ in range(4)]
        threads = [threading.Thread(target=open_it, args=(b,)) for b in backends]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for backend in backends:
            backend.close()
    assert errors == []


def test_a_resume_does_not_read_the_stored_log_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def turns(*prompts: str) -> LogBuilder:
        log = LogBuilder(start=1.0)
        for prompt in prompts:
            log.turn(prompt, calls=())
        return log

    backend = SqliteBackend(tmp_path / "s.sqlite3")
    first = turns("q", "q again")
    backend.append(SessionInfo("s", 1.0, title="x"), first.events, durable=False)
    reads: list[str] = []
    read = backend._read_log
    monkeypatch.setattr(
        backend, "_read_log", lambda db, sid, n: reads.append(sid) or read(db, sid, n)
    )

    loaded = backend.load("s")
    tail = backend.tail("s")  # the resume's first write asks where the log ends
    assert loaded is not None and tail is not None
    assert (tail.next_seq, tail.last) == (len(first.events), loaded.stored.events[-1])
    assert reads == []  # the load's read was reused

    backend.load("s")
    more = turns("q", "q again", "third")
    other = SqliteBackend(tmp_path / "s.sqlite3")  # another writer stores more meanwhile
    other.append(SessionInfo("s", 1.0), more.events[len(first.events) :], durable=False)
    other.close()
    tail = backend.tail("s")
    assert reads == ["s"]  # the log changed since the load: read again
    assert tail is not None and tail.next_seq == len(more.events)
    backend.close()
