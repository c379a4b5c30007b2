"""Another program's SQLite database is not taken for dsh's: one whose own first
migration set ``PRAGMA user_version = 1`` (as dsh's schema does), with its own
``sessions`` and ``events`` tables, was switched to WAL and given a ``workspaces``
table by ``dsh sessions list`` (which then failed: "no such column: created"), and
``dsh sessions delete x`` deleted the program's rows. A dsh database is marked with
``PRAGMA application_id`` and known by its tables when it was created before the mark;
any other is refused read-only: nothing in it changed, nothing made beside it."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from dsh.cli import main
from dsh.session import SessionEvent
from dsh_persistence import (
    SessionCorruptError,
    SessionFormatError,
    SessionInfo,
    SqliteBackend,
)
from dsh_persistence._sqlite_schema import APPLICATION_ID, SCHEMA

pytestmark = pytest.mark.plugins("persistence")


def migrated_app(path: Path) -> None:
    """An app's database after its own first migration: ``user_version`` 1."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, user TEXT)")
        db.execute("CREATE TABLE events (session TEXT, what TEXT)")
        db.execute("INSERT INTO sessions VALUES ('x', 'bob')")
        db.execute("INSERT INTO events VALUES ('x', 'login')")
        db.execute("PRAGMA user_version=1")
        db.commit()


def marked_app(path: Path) -> None:
    """Another program's database, marked with its own ``application_id``."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, user TEXT)")
        db.execute("INSERT INTO sessions VALUES ('x', 'bob')")
        db.execute("PRAGMA application_id=305419896")  # 0x12345678
        db.commit()


def migrated_notes(path: Path) -> None:
    """``user_version`` 1 and none of dsh's tables."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE notes (line TEXT)")
        db.execute("INSERT INTO notes VALUES ('mine')")
        db.execute("PRAGMA user_version=1")
        db.commit()


def unversioned_app(path: Path) -> None:
    """``user_version`` 0, but a ``sessions`` table that is not dsh's."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, user TEXT)")
        db.execute("INSERT INTO sessions VALUES ('x', 'bob')")
        db.commit()


def django(path: Path) -> None:
    """Django's ``db.sqlite3``: ``user_version`` 0 and its own tables (dsh's were created
    in it by the first save, with ``user_version`` 1 and dsh's mark)."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE django_migrations (id INTEGER PRIMARY KEY, app TEXT)")
        db.execute("INSERT INTO django_migrations VALUES (1, 'auth')")
        db.commit()


def sessions_view(path: Path) -> None:
    """A view named ``sessions`` with dsh's columns, ``user_version`` 0 (it passed the
    check, and the first save committed the mark, then failed)."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE people (name TEXT)")
        db.execute("INSERT INTO people VALUES ('bob')")
        db.execute(
            "CREATE VIEW sessions AS SELECT name AS id, 0 AS created, 0 AS updated, "
            "0 AS turns, '' AS title, '' AS cwd, '{}' AS meta, 0 AS next_seq FROM people"
        )
        db.commit()


APPS: dict[str, tuple[Callable[[Path], None], str]] = {
    "django": (django, "user_version 0, and it holds another program's tables: django_mig"),
    "view": (sessions_view, "user_version 0, and it holds another program's tables: people"),
    "user_version 1": (migrated_app, "table 'sessions' is another program's: no column"),
    "user_version 1, no tables": (migrated_notes, "user_version 1, but no table sessions"),
    "application_id": (marked_app, "application_id is 0x12345678"),
    "own sessions table": (unversioned_app, "table 'sessions' is another program's"),
}


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def state(path: Path) -> tuple[str, dict[str, list[object]], list[str]]:
    """The journal mode, the rows of each table and what is in the directory."""
    with closing(sqlite3.connect(path)) as db:
        mode = db.execute("PRAGMA journal_mode").fetchone()[0]
        names = db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")
        rows = {name: db.execute(f"SELECT * FROM {name}").fetchall() for (name,) in names}
    return mode, rows, sorted(p.name for p in path.parent.iterdir())


def saved(backend: SqliteBackend, session_id: str) -> None:
    event = SessionEvent("note", 0, 2.0, {"by": "test"})
    backend.append(SessionInfo(session_id, 1.0), [event], durable=True)


@pytest.mark.parametrize("app", APPS)
def test_another_programs_database_is_refused_and_left_as_it_was(app: str, tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    make, reason = APPS[app]
    make(path)
    before, was = sha(path), state(path)
    assert was[0] == "delete" and was[1] and was[2] == ["app.db"]
    uses: list[Callable[[SqliteBackend], object]] = [
        lambda b: b.prepare(),
        lambda b: b.headers(),
        lambda b: b.load("x"),
        lambda b: b.tail("x"),
        lambda b: b.delete("x"),
        lambda b: saved(b, "s"),
    ]
    for use in uses:
        backend = SqliteBackend(path, source="persistence.database")
        try:
            with pytest.raises(SessionFormatError) as caught:
                use(backend)
        finally:
            backend.close()
        said = str(caught.value)
        assert said.startswith(f"{path} (persistence.database): not a dsh session database (")
        assert reason in said and said.endswith("it was not changed")
        assert sha(path) == before
    assert state(path) == was


@pytest.mark.parametrize("command", ["list", "show x", "delete x"])
def test_the_sessions_commands_refuse_another_programs_database(
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    monkeypatch.delenv("DSH_PERSISTENCE_DIR", raising=False)
    directory = tmp_path / "store"
    directory.mkdir()
    path = directory / "app.db"
    migrated_app(path)
    before = sha(path)
    config = tmp_path / "dsh.yml"
    config.write_text(f"persistence: {{backend: sqlite, database: {path}}}\n")
    status = main(["-c", str(config), "sessions", *command.split()])
    err = capsys.readouterr().err
    assert status != 0, err
    assert f"{path} (persistence.database): not a dsh session database (" in err
    assert "no such column" not in err
    assert sha(path) == before
    assert state(path) == (
        "delete",
        {"events": [("x", "login")], "sessions": [("x", "bob")]},
        ["app.db"],
    )


def test_a_new_database_is_marked_as_dshs(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    backend = SqliteBackend(path)
    try:
        saved(backend, "s")
    finally:
        backend.close()
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID


def test_a_dsh_database_from_before_the_mark_opens_and_is_marked(tmp_path: Path) -> None:
    """``user_version`` 1, dsh's tables, ``application_id`` 0: what dsh wrote before
    the mark. Read first (changing nothing), then stamped when opened to write."""
    path = tmp_path / "s.sqlite3"
    with closing(sqlite3.connect(path)) as db:
        for statement in SCHEMA[:2]:  # sessions and events: no workspaces yet, perhaps
            db.execute(statement)
        db.execute("PRAGMA user_version=1")
        db.commit()
    backend = SqliteBackend(path)
    try:
        backend.prepare()
        assert backend.headers() == []
        saved(backend, "s")
        assert [h.id for h in backend.headers()] == ["s"]
    finally:
        backend.close()
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert db.execute("PRAGMA user_version").fetchone()[0] == 1


def test_a_marked_database_without_its_tables_is_said_damaged_and_left_as_it_was(
    tmp_path: Path,
) -> None:
    """dsh's mark and ``user_version`` 1, but no ``sessions`` table: the mark skipped the
    check of the tables, and a save created ``workspaces`` and failed with SQLite's "no
    such table: sessions"."""
    path = tmp_path / "s.sqlite3"
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE notes (line TEXT)")
        db.execute(f"PRAGMA application_id={APPLICATION_ID}")
        db.execute("PRAGMA user_version=1")
        db.commit()
    before, was = sha(path), state(path)
    for use in (lambda b: b.headers(), lambda b: saved(b, "s")):
        backend = SqliteBackend(path, source="persistence.database")
        try:
            with pytest.raises(SessionCorruptError) as caught:
                use(backend)
        finally:
            backend.close()
        assert str(caught.value) == (
            f"{path} (persistence.database): the session database is damaged: "
            "user_version 1, but no table sessions, events; it was not changed"
        )
    assert sha(path) == before and state(path) == was


def test_a_marked_database_whose_table_lacks_a_column_is_said_damaged(tmp_path: Path) -> None:
    """dsh's mark and its tables, but ``sessions`` without dsh's ``title`` (renamed by
    hand): listing failed with SQLite's bare "no such column: title"."""
    path = tmp_path / "s.sqlite3"
    backend = SqliteBackend(path, source="persistence.database")
    try:
        saved(backend, "s")
    finally:
        backend.close()
    with closing(sqlite3.connect(path)) as db:
        db.execute("ALTER TABLE sessions RENAME COLUMN title TO name")
        db.commit()
    before, was = sha(path), state(path)
    for use in (lambda b: b.headers(), lambda b: saved(b, "t")):
        backend = SqliteBackend(path, source="persistence.database")
        try:
            with pytest.raises(SessionCorruptError) as caught:
                use(backend)
        finally:
            backend.close()
        assert str(caught.value) == (
            f"{path} (persistence.database): the session database is damaged: its table "
            "'sessions' has no column title; it was not changed"
        )
    assert sha(path) == before and state(path) == was
