"""Both first-party backends pass the conformance suite of ``dsh_persistence.testing``
(behaviours 41 and 43 at the storage level; 40 through a harness)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from dsh_persistence import JsonlBackend, SessionBackend, SqliteBackend
from dsh_persistence.testing import BackendContract, JsonlDamage, SqliteDamage

pytestmark = pytest.mark.plugins("persistence")


class TestJsonlBackend(BackendContract):
    @pytest.fixture
    def backend_factory(self, tmp_path: Path) -> Callable[[], SessionBackend]:
        return lambda: JsonlBackend(tmp_path / "sessions")

    @pytest.fixture
    def damage(self, tmp_path: Path) -> JsonlDamage:
        return JsonlDamage(tmp_path / "sessions")


class TestSqliteBackend(BackendContract):
    @pytest.fixture
    def backend_factory(self, tmp_path: Path) -> Callable[[], SessionBackend]:
        return lambda: SqliteBackend(tmp_path / "db" / "sessions.sqlite3")

    @pytest.fixture
    def damage(self, tmp_path: Path) -> SqliteDamage:
        return SqliteDamage(tmp_path / "db" / "sessions.sqlite3")
