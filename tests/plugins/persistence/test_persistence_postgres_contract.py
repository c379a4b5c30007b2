"""The PostgreSQL backend passes the conformance suite of ``dsh_persistence.testing``
(behaviours 40, 41 and 43 as the other backends do), against a real server
(``pg_server``: a throwaway one per test process, a fresh schema per test)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dsh_persistence import PostgresBackend, SessionBackend
from dsh_persistence.testing import BackendContract, PostgresDamage

pytestmark = pytest.mark.plugins("persistence")


class TestPostgresBackend(BackendContract):
    @pytest.fixture
    def backend_factory(self, pg_url: str) -> Callable[[], SessionBackend]:
        return lambda: PostgresBackend(pg_url)

    @pytest.fixture
    def damage(self, pg_url: str) -> PostgresDamage:
        return PostgresDamage(pg_url)
