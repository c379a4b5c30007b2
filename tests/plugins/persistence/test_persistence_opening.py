"""A database whose set-up fails at open (SQLite and PostgreSQL alike): the error names
the store, its setting and what failed, and the new connection is closed, not left open
for no one to use; the next call tries again."""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from dsh_persistence import (
    PersistenceError,
    PostgresBackend,
    SessionFormatError,
    SqliteBackend,
)
from dsh_persistence._postgres_schema import SCHEMA_VERSION as PG_VERSION
from dsh_persistence._sqlite_schema import APPLICATION_ID

pytestmark = pytest.mark.plugins("persistence")

needs_proc = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not Path("/proc/self/fd").exists(),
    reason="needs Linux /proc to see the open files",
)


def open_on(path: Path) -> list[str]:
    """The descriptors of this process open on ``path``."""
    fds = Path("/proc/self/fd")
    found = []
    for fd in os.listdir(fds):
        try:
            if os.readlink(fds / fd) == str(path):
                found.append(fd)
        except OSError:  # closed meanwhile (listdir's own descriptor)
            pass
    return found


@needs_proc
def test_a_file_that_is_no_sqlite_database_is_named_and_not_kept_open(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    path.write_text("not a database\n" * 100)
    backend = SqliteBackend(path, source="persistence.database")
    try:
        for _ in range(2):  # the second call opens again: no half-set-up connection kept
            with pytest.raises(PersistenceError) as caught:
                backend.load("s")
            assert str(caught.value) == (
                f"{path} (persistence.database): cannot open the session database: "
                "file is not a database"
            )
            assert isinstance(caught.value.__cause__, sqlite3.DatabaseError)
            assert open_on(path) == []
    finally:
        backend.close()


@needs_proc
def test_a_newer_sqlite_database_is_refused_and_not_kept_open(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    SqliteBackend(path).close()
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA application_id={APPLICATION_ID}")  # a newer dsh's mark
        db.execute("PRAGMA user_version=99")
    db.close()
    backend = SqliteBackend(path)
    try:
        with pytest.raises(SessionFormatError, match="version 99 is newer"):
            backend.load("s")
        assert open_on(path) == []
    finally:
        backend.close()


def connections(server: Any, name: str) -> int:
    """How many connections named ``name`` the server has, once those closing are gone."""
    import psycopg

    with psycopg.connect(server.url(), autocommit=True) as db:
        for _ in range(100):
            row = db.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (name,)
            ).fetchone()
            assert row is not None
            if row[0] == 0:
                return 0
            time.sleep(0.05)  # a closed connection's backend exits soon after
        return int(row[0])


def test_postgres_tables_that_cannot_be_created_are_named_and_not_kept_open(
    pg_server: Any,
) -> None:
    # the search path names no schema that exists: nowhere to create the tables in
    url = pg_server.url("no_such_schema") + "&application_name=dsh_opening_create"
    backend = PostgresBackend(url, source="persistence.url")
    try:
        with pytest.raises(PersistenceError) as caught:
            backend.prepare()
        assert str(caught.value).startswith(
            f"{url} (persistence.url): cannot create the session tables: "
            "no schema has been selected to create in"
        )
        assert connections(pg_server, "dsh_opening_create") == 0
    finally:
        backend.close()


def test_a_newer_postgres_schema_is_refused_and_not_kept_open(pg_server: Any) -> None:
    schema = pg_server.schema()
    created = PostgresBackend(pg_server.url(schema))
    created.prepare()
    created.close()
    pg_server.execute(f"INSERT INTO {schema}.dsh_version VALUES ({PG_VERSION + 1})")
    url = pg_server.url(schema) + "&application_name=dsh_opening_newer"
    backend = PostgresBackend(url)
    try:
        with pytest.raises(SessionFormatError, match=f"version {PG_VERSION + 1} is newer"):
            backend.prepare()
        assert connections(pg_server, "dsh_opening_newer") == 0
    finally:
        backend.close()
