"""A session row whose ``meta`` is damaged (not JSON, or JSON but not an object) in a
SQLite or PostgreSQL store: loading it is refused as corrupt, naming the database and
the session. Before: ``json.loads`` raised its bare ``ValueError`` out of ``load`` (or a
list was handed on as the meta)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from dsh_persistence import SessionCorruptError, SessionInfo, SqliteBackend
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

DAMAGED = ["{not json", "[1, 2]", "[" * 100_000]


def stored(backend: Any) -> None:
    log = LogBuilder()
    log.turn("one")
    backend.prepare()
    backend.append(SessionInfo("s", 1.0, meta={"a": 1}), log.events, durable=True)


@pytest.mark.parametrize("meta", DAMAGED, ids=["not-json", "a-list", "too-deep"])
def test_a_sqlite_session_whose_meta_is_damaged_is_refused_as_corrupt(
    tmp_path: Path, meta: str
) -> None:
    path = tmp_path / "sessions.db"
    backend = SqliteBackend(path)
    try:
        stored(backend)
        with closing(sqlite3.connect(path)) as db, db:
            db.execute("UPDATE sessions SET meta=? WHERE id='s'", (meta,))
        with pytest.raises(SessionCorruptError) as caught:
            backend.load("s")
    finally:
        backend.close()
    assert str(caught.value) == f"{path}: session 's': its stored meta is not a JSON object"


def test_a_postgres_session_whose_meta_is_damaged_is_refused_as_corrupt(
    open_backend: Callable[[], Any], pg_url: str
) -> None:
    import psycopg

    backend = open_backend()
    stored(backend)
    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute("UPDATE dsh_sessions SET meta='[1, 2]' WHERE id='s'")
    with pytest.raises(SessionCorruptError, match="session 's': its stored meta is not a JSON"):
        backend.load("s")
