"""``dsh sessions delete`` stops at a store it cannot use at all: a SQLite database
another process holds locked, a PostgreSQL server it cannot reach. Each id was tried in
turn and failed alike (a locked database: its 30 s busy timeout once per id), each said
on its own line (psycopg's message on two), status 1; now the first failure is said
once, on one line, status 2, as ``list`` and ``show`` say it (docs/persistence.md). An
id that alone cannot be deleted is still said and passed over
(test_persistence_cli_delete_goes_on.py)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from persistence_cli_support import run, store

import dsh_persistence._sqlite as sqlite_module
from dsh_persistence import PersistenceError, PersistenceSettings, SessionStoreUnusableError
from dsh_persistence._opening import unusable_error
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")


class _Quick(sqlite_module.SqliteBackend):
    """A SQLite backend that waits for a lock a moment, not 30 s."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "timeout": 0.05})


def test_a_locked_sqlite_database_is_said_once_and_no_id_is_tried_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    monkeypatch.chdir(tmp_path)
    settings = PersistenceSettings(backend="sqlite", directory=tmp_path / "sessions")
    for session_id in ("first", "second"):
        log = LogBuilder(start=1_700_000_000.0)
        log.turn("hello", calls=())
        store(settings, session_id, log)
    config = tmp_path / "dsh.yml"
    config.write_text(f"persistence:\n  backend: sqlite\n  directory: {tmp_path / 'sessions'}\n")
    monkeypatch.setattr(sqlite_module, "SqliteBackend", _Quick)
    database = settings.database_path()
    holder = sqlite3.connect(database, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another process writing: the write lock held
        assert run(config, "delete", "first", "second") == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err == (
            f"dsh: error: {database} (persistence.directory): cannot open the session "
            "database: database is locked\n"
        )
    finally:
        holder.close()
    assert run(config, "list", "--json") == 0
    assert sorted(row["id"] for row in json.loads(capsys.readouterr().out)) == [
        "first",
        "second",
    ]


def test_an_unreachable_postgresql_server_is_said_once_on_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("psycopg")
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "dsh.yml"
    # port 1: nothing listens there, the connection is refused at once
    config.write_text(
        "persistence:\n  backend: postgresql\n"
        "  url: postgresql://bob:hunter22@127.0.0.1:1/db?connect_timeout=2\n"
    )
    assert run(config, "delete", "first", "second") == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    said = "dsh: error: postgresql://bob:***@127.0.0.1:1/db?connect_timeout=2 (persistence.url): "
    assert captured.err.startswith(f"{said}cannot connect to the session database: ")
    assert captured.err.count("\n") == 1  # psycopg's hint on its second line joined
    assert "hunter22" not in captured.err


def test_a_store_unusable_error_is_a_persistence_error_said_on_one_line() -> None:
    error = unusable_error("/db", "persistence.directory", "open it", "refused\n\tIs it  up?\n")
    assert isinstance(error, SessionStoreUnusableError)
    assert isinstance(error, PersistenceError) and error.code == "PERSISTENCE"
    assert str(error) == "/db (persistence.directory): cannot open it: refused Is it  up?"
