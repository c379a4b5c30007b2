"""The service's ``location``: the optional attribute of
``dsh.persistence.SessionPersistence`` that says where the sessions are on disk (the
directory of the JSONL backend, the database file of the SQLite one), read with
``dsh.persistence.store_location``. dsh-permissions keeps it out of accept-edits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsh.persistence import SessionHeader, store_location
from dsh_persistence import JsonlBackend, SqliteBackend, StoredSessions
from dsh_persistence._backend import SessionBackend

pytestmark = pytest.mark.plugins("persistence")


def test_the_jsonl_service_gives_its_directory(tmp_path: Path) -> None:
    service = StoredSessions(JsonlBackend(tmp_path / "sessions"))
    assert service.location == str(tmp_path / "sessions")
    assert store_location(service) == os.path.realpath(tmp_path / "sessions")


def test_the_sqlite_service_gives_its_database_file(tmp_path: Path) -> None:
    backend = SqliteBackend(tmp_path / "s.db")
    try:
        assert StoredSessions(backend).location == str(tmp_path / "s.db")
    finally:
        backend.close()


def test_a_relative_directory_is_given_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert StoredSessions(JsonlBackend(".dsh")).location == str(tmp_path / ".dsh")


class Remote(SessionBackend):
    """A backend of a third party (its sessions may be on another machine): it sets
    ``location`` for messages and no ``stored_in``."""

    location = "https://sessions.example/team"

    def tail(self, session_id: str) -> None:
        return None

    def append(self, info: object, events: object, *, durable: bool) -> None:
        raise NotImplementedError

    def sync(self, session_id: str) -> None:
        raise NotImplementedError

    def load(self, session_id: str) -> None:
        return None

    def headers(self) -> list[SessionHeader]:
        return []

    def delete(self, session_id: str) -> bool:
        return False


def test_a_backend_of_a_third_party_gives_none() -> None:
    service = StoredSessions(Remote())
    assert service.location is None
    assert store_location(service) is None
