"""A backend that subclasses the SQLite or PostgreSQL one and overrides only ``delete``
(to archive first, or to refuse): the service's delete (``dsh sessions delete``,
``StoredSessions.delete``) found the base class's ``delete_counting`` by name and
called it, so the override was bypassed and the session deleted anyway. Now an
override of ``delete`` below ``delete_counting`` is the one called."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from persistence_cli_support import store

from dsh_persistence import PersistenceSettings, PostgresBackend, SqliteBackend, StoredSessions
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")


class Refusing:
    """Overrides ``delete`` only: keeps every session, and says what it was asked."""

    asked: list[str]

    def delete(self, session_id: str) -> bool:
        self.asked.append(session_id)
        return False


class RefusingSqlite(Refusing, SqliteBackend):
    pass


class RefusingPostgres(Refusing, PostgresBackend):
    pass


class Counting(SqliteBackend):
    """Overrides both: its ``delete_counting`` is still the one called."""

    def delete_counting(self, session_id: str) -> tuple[bool, int]:
        return False, 7


@pytest.fixture(params=["sqlite", "postgresql"])
def refusing(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "postgresql":
        url = request.getfixturevalue("pg_url")
        settings = PersistenceSettings(backend="postgresql", url=url)
        backend: Any = RefusingPostgres(url)
    else:
        settings = PersistenceSettings(backend="sqlite", directory=tmp_path)
        backend = RefusingSqlite(settings.database_path())
    backend.asked = []
    log = LogBuilder(start=1_700_000_000.0)
    log.turn("keep me", calls=())
    store(settings, "kept", log)
    yield backend
    backend.close()


async def test_a_subclass_overriding_delete_only_is_asked_to_delete(refusing: Any) -> None:
    service = StoredSessions(refusing)
    assert await service.delete("kept") is False
    assert await service.delete_counting("kept") == (False, 0)
    assert refusing.asked == ["kept", "kept"]
    assert await service.load("kept") is not None  # not deleted behind its back


async def test_a_subclass_overriding_delete_counting_is_asked_to_count(tmp_path: Path) -> None:
    backend = Counting(tmp_path / "sessions.db")
    try:
        assert await StoredSessions(backend).delete_counting("any") == (False, 7)
    finally:
        backend.close()
