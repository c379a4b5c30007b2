"""The conformance suite for session backends (public API).

A backend, first-party or third-party, runs it with one import::

    import pytest
    from dsh_persistence.testing import BackendContract, JsonlDamage
    from dsh_persistence import JsonlBackend


    class TestMyBackend(BackendContract):
        @pytest.fixture
        def backend_factory(self, tmp_path):
            return lambda: JsonlBackend(tmp_path)

        @pytest.fixture
        def damage(self, tmp_path):
            return JsonlDamage(tmp_path)

It checks the append/load round trip, the seq contract, torn tails, interrupted-turn
closing, corruption detection, newer formats, headers, concurrent sessions and resume
through a real harness, and where sessions are: the workspace each last ran in
(``--continue`` follows it) and the store's ``stored_in``/``location``. Needs pytest,
pytest-asyncio (or anyio's plugin) and ``pytest_plugins = ["dsh.testing"]``.
"""

from __future__ import annotations

from dsh_persistence.testing._contract import BackendContract
from dsh_persistence.testing._damage import Damage, JsonlDamage, PostgresDamage, SqliteDamage
from dsh_persistence.testing._logs import LogBuilder

__all__ = [
    "BackendContract",
    "Damage",
    "JsonlDamage",
    "LogBuilder",
    "PostgresDamage",
    "SqliteDamage",
]
