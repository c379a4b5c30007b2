"""Agents disposed at once (``dispose_all``) whose sessions are in a store no longer
current: each releases its claim in a worker thread, and the store is closed only once
none is releasing on it. Before: the second dispose took the store as unused and closed
it while the first's release was still to run on it (harmless for the built-in
backends, which take a release after close as a no-op; a backend of one's own may
raise)."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

from dsh_persistence import PersistencePlugin, PersistenceSettings
from dsh_persistence._sqlite import SqliteBackend
from dsh_persistence._writer import SessionWriter

pytestmark = pytest.mark.plugins("persistence")


class Noting(SqliteBackend):
    """Notes each call; the release of session "a" is slow."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls: list[str] = []

    def release(self, session_id: str) -> None:
        if session_id == "a":
            time.sleep(0.3)
        self.calls.append(f"release {session_id}")
        super().release(session_id)

    def close(self) -> None:
        self.calls.append("close")
        super().close()


async def test_a_store_is_closed_after_every_concurrent_dispose_released_on_it(
    tmp_path: Path,
) -> None:
    settings = PersistenceSettings(backend="sqlite", directory=tmp_path / "old")
    old = Noting(settings.database_path())
    sessions = {name: SimpleNamespace(id=name) for name in ("a", "b")}
    plugin = PersistencePlugin()
    plugin._stores.backends["old"] = old
    for name, session in sessions.items():
        assert old.claim(name)
        writer = SessionWriter(old, session, settings, None)  # type: ignore[arg-type]
        plugin._writers[id(session)] = writer
    plugin.configure(PersistenceSettings(backend="sqlite", directory=tmp_path / "new"))

    async with anyio.create_task_group() as tg:
        for session in sessions.values():
            tg.start_soon(plugin.agent_disposed, SimpleNamespace(session=session))

    assert sorted(old.calls[:2]) == ["release a", "release b"]
    assert old.calls[2:] == ["close"]
