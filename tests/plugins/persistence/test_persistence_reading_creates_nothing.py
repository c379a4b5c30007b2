"""Reading a store that is not there finds nothing and creates nothing: ``dsh sessions
list``, ``show`` and ``delete`` beside a session directory or database no session has
been saved in yet leave no directory, database or claims behind (a SQLite database was
created, schema and all, by the first look), and no tables in a PostgreSQL database (a
database without dsh's tables got them from the first ``dsh sessions list``: a list
pointed at the wrong database changed it), nor in a SQLite file that holds none (another
program's database, an empty file). The first save creates them."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from dsh.cli import main
from dsh.session import SessionEvent
from dsh_persistence import JsonlBackend, PostgresBackend, SessionInfo, SqliteBackend
from dsh_persistence._backend import SessionBackend

pytestmark = pytest.mark.plugins("persistence")


def commands_find_nothing(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """``dsh sessions list``, ``show`` and ``delete`` (``args``: up to ``sessions``) say
    there is no session."""
    assert main([*args, "list"]) == 0
    assert "no stored sessions in " in capsys.readouterr().err
    assert main([*args, "show", "main-session-0"]) == 2
    assert "main-session-0" in capsys.readouterr().err
    assert main([*args, "delete", "main-session-0"]) == 1
    assert "main-session-0" in capsys.readouterr().err


@pytest.mark.parametrize("backend", ["jsonl", "sqlite"])
def test_the_sessions_commands_create_no_store(
    backend: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    monkeypatch.delenv("DSH_PERSISTENCE_DIR", raising=False)
    store = tmp_path / "not-yet"
    config = tmp_path / "dsh.yml"
    config.write_text(f"persistence:\n  backend: {backend}\n  directory: {store / 'sessions'}\n")
    args = ["--cwd", str(tmp_path), "sessions"]

    commands_find_nothing(args, capsys)
    assert not store.exists()


def reads_nothing(backend: SessionBackend) -> None:
    """Every read of ``backend`` (and a delete) finds no session."""
    assert backend.headers() == []
    assert backend.load("main-session-0") is None
    assert backend.tail("main-session-0") is None
    assert backend.delete("main-session-0") is False


@pytest.mark.parametrize("make", [JsonlBackend, SqliteBackend], ids=["jsonl", "sqlite"])
def test_a_backend_reads_a_store_that_is_not_there_as_empty(
    tmp_path: Path, make: Callable[[Path], SessionBackend]
) -> None:
    where = tmp_path / "not-yet" / ("sessions" if make is JsonlBackend else "s.sqlite3")
    backend = make(where)
    try:
        reads_nothing(backend)
    finally:
        backend.close()
    assert not (tmp_path / "not-yet").exists()


@pytest.mark.parametrize("kind", ["empty database", "empty"])
def test_a_sqlite_file_without_sessions_is_read_as_empty_and_left_as_it_was(
    kind: str, tmp_path: Path
) -> None:
    """A database path that names an empty SQLite database (or an empty file) holds no
    session: reading it, or deleting from it, left dsh's tables in it, switched it to
    WAL and made a claims directory beside it. The first save still stores there.
    (Another program's, with its own tables, is refused: test_persistence_sqlite_foreign.)"""
    path = tmp_path / "app.db"
    if kind == "empty":
        path.touch()
    else:
        with closing(sqlite3.connect(path)) as db, db:
            db.execute("CREATE TABLE t (x)")  # a page 1, and nothing in sqlite_master
            db.execute("DROP TABLE t")
    before = path.read_bytes()
    backend = SqliteBackend(path)
    try:
        reads_nothing(backend)
        assert path.read_bytes() == before
        assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db"]
        saved(backend, "main-session-0")
        assert [h.id for h in backend.headers()] == ["main-session-0"]
    finally:
        backend.close()


def tables(server: Any, schema: str) -> list[str]:
    """The tables in ``schema`` of ``server``."""
    import psycopg

    with psycopg.connect(server.url(), autocommit=True) as db:
        found = db.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname=%s ORDER BY tablename", (schema,)
        ).fetchall()
    return [row[0] for row in found]


def saved(backend: SessionBackend, session_id: str) -> None:
    event = SessionEvent("note", 0, 2.0, {"by": "test"})
    backend.append(SessionInfo(session_id, 1.0), [event], durable=True)


def test_the_sessions_commands_create_no_postgres_tables(
    pg_server: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    schema = pg_server.schema()
    url = pg_server.url(schema)
    (tmp_path / "dsh.yml").write_text(f"persistence:\n  backend: postgresql\n  url: '{url}'\n")
    args = ["--cwd", str(tmp_path), "sessions"]

    commands_find_nothing(args, capsys)
    assert tables(pg_server, schema) == []

    writer = PostgresBackend(url)  # the first save creates them
    try:
        saved(writer, "main-session-0")
    finally:
        writer.close()
    assert tables(pg_server, schema) == [
        "dsh_events",
        "dsh_sessions",
        "dsh_version",
        "dsh_workspaces",
    ]
    assert main([*args, "list"]) == 0
    assert "main-session-0" in capsys.readouterr().out


def test_a_postgres_backend_reads_a_database_without_tables_as_empty(pg_server: Any) -> None:
    """Read through backends that stay connected: nothing there, nothing created. The
    first claim or save of one creates the tables on its connection, and the other,
    which found none on its own, finds them and what is stored there."""
    schema = pg_server.schema()
    one, two = PostgresBackend(pg_server.url(schema)), PostgresBackend(pg_server.url(schema))
    try:
        for backend in (one, two):
            reads_nothing(backend)
        assert tables(pg_server, schema) == []

        assert one.claim("mine") is True  # a claim is to be followed by a write
        assert len(tables(pg_server, schema)) == 4
        saved(one, "mine")
        one.release("mine")
        assert [h.id for h in two.headers()] == ["mine"]
        saved(two, "other")
        assert sorted(h.id for h in one.headers()) == ["mine", "other"]
    finally:
        one.close()
        two.close()


def test_tables_without_their_version_row_are_read_as_they_are(pg_server: Any) -> None:
    """Tables an administrator created without ``INSERT INTO dsh_version`` (or whose row
    is gone) hold what was stored: a read lists it (it found "no sessions") and adds no
    row; a write adds the row, as before."""
    import psycopg

    schema = pg_server.schema()
    writer = PostgresBackend(pg_server.url(schema))
    try:
        saved(writer, "main-session-0")
    finally:
        writer.close()
    with psycopg.connect(pg_server.url(schema), autocommit=True) as db:
        db.execute(f'DELETE FROM "{schema}".dsh_version')

    def version_rows() -> list[Any]:
        with psycopg.connect(pg_server.url(schema), autocommit=True) as db:
            return db.execute(f'SELECT * FROM "{schema}".dsh_version').fetchall()

    reader = PostgresBackend(pg_server.url(schema))
    try:
        assert [h.id for h in reader.headers()] == ["main-session-0"]
        assert reader.delete("not-stored") is False  # checks for a claim: no deadlock
        assert version_rows() == []
        saved(reader, "main-session-1")  # the same backend's write adds it
        assert version_rows() == [(1,)]
    finally:
        reader.close()


@pytest.mark.parametrize("row", [True, False], ids=["with its row", "empty"])
def test_a_schema_with_only_the_version_table_is_read_as_empty(pg_server: Any, row: bool) -> None:
    """A half-done manual setup (``CREATE TABLE dsh_version``, with or without its row,
    and nothing else): reads failed with 'relation "dsh_sessions" does not exist' (and,
    with the row, so did every write). Now a read finds nothing and creates nothing, and
    the first write, on the reader's own connection, creates the missing tables."""
    import psycopg

    schema = pg_server.schema()
    with psycopg.connect(pg_server.url(schema), autocommit=True) as db:
        db.execute(f'CREATE TABLE "{schema}".dsh_version (version integer NOT NULL)')
        if row:
            db.execute(f'INSERT INTO "{schema}".dsh_version VALUES (1)')
    backend = PostgresBackend(pg_server.url(schema))
    try:
        reads_nothing(backend)
        assert tables(pg_server, schema) == ["dsh_version"]
        saved(backend, "main-session-0")
        assert tables(pg_server, schema) == [
            "dsh_events",
            "dsh_sessions",
            "dsh_version",
            "dsh_workspaces",
        ]
        assert [h.id for h in backend.headers()] == ["main-session-0"]
    finally:
        backend.close()
    with psycopg.connect(pg_server.url(schema), autocommit=True) as db:
        assert db.execute(f'SELECT * FROM "{schema}".dsh_version').fetchall() == [(1,)]
