"""Whether a SQLite database is dsh's is read in one snapshot of it. Read statement by
statement, a check that ran while another process created dsh's schema saw
``user_version`` 0 from before that process's commit and the tables from after it,
and refused the database as "another program's tables: sessions, events, workspaces"
(seen in CI: four backends writing one new database at once)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from dsh.session import SessionEvent
from dsh_persistence import SessionInfo, SqliteBackend
from dsh_persistence._sqlite_schema import checked_version, no_schema

pytestmark = pytest.mark.plugins("persistence")


def empty_wal_database(path: Path) -> None:
    """A database as the first of several openers leaves it before its schema: empty,
    in WAL mode (so a writer may commit while another connection reads)."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA journal_mode=WAL")


def schema_created_at(statement_part: str, path: Path, db: sqlite3.Connection) -> list[str]:
    """Have another dsh backend create the schema in ``path`` (and save a session)
    just before ``db`` first runs a statement containing ``statement_part``; the
    sessions it saved, listed once it ran."""
    done: list[str] = []

    def trace(statement: str) -> None:
        if statement_part in statement and not done:
            other = SqliteBackend(path)
            try:
                other.append(
                    SessionInfo("other", 1.0), [SessionEvent("note", 0, 2.0, {})], durable=True
                )
                done.extend(header.id for header in other.headers())
            finally:
                other.close()

    db.set_trace_callback(trace)
    return done


def test_a_schema_created_between_the_version_checks_reads_is_not_another_programs(
    tmp_path: Path,
) -> None:
    path = tmp_path / "sessions.sqlite3"
    empty_wal_database(path)
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        made = schema_created_at("sqlite_master", path, db)
        version = checked_version(db, str(path))
    assert made == ["other"]  # the other backend did create it, mid-check
    assert version == 0  # the state before it, read whole: opening goes on to see it


def test_a_schema_created_during_the_read_only_look_is_not_another_programs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "sessions.sqlite3"
    empty_wal_database(path)
    made: list[list[str]] = []
    connect = sqlite3.connect

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        db = connect(*args, **kwargs)
        if not made:  # the look's own connection, not the other backend's
            made.append(schema_created_at("sqlite_master", path, db))
        return db

    monkeypatch.setattr(sqlite3, "connect", traced)
    empty = no_schema(path)
    monkeypatch.undo()
    assert made == [["other"]]
    assert empty is True  # as it was when the look began, read whole
