"""A session id a backend cannot store is refused as its agent is created, with the
error every flush would give, before any model call: it was accepted, the agent ran,
and each save failed. JSONL: an id longer than a file name can be (240 bytes once
encoded). SQLite stores it. (An id holding a NUL, which PostgreSQL cannot store, is
refused by ``agents.create`` itself, as any control character.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dsh.errors import DshError
from dsh.plugins import create_plugin_manager
from dsh.testing import ScriptedModel, scripted_harness, text
from dsh_persistence import (
    PersistenceError,
    PersistencePlugin,
    PersistenceSettings,
    SessionInfo,
    open_backend,
)
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")


async def created(settings: PersistenceSettings, session_id: str) -> BaseException | None:
    """What creating an agent on ``session_id`` raised (None: created), the model
    asked nothing either way (the agent runs no turn)."""
    plugin = PersistencePlugin(settings)
    model = ScriptedModel([text("hi")])
    pm = create_plugin_manager([("persistence", plugin)], load_entry_points=False)
    try:
        async with scripted_harness(model, pm=pm) as harness:
            try:
                await harness.agents.create("a", session_id, options={"model": "scripted"})
            except PersistenceError as exc:
                assert not harness.agents.list()
                return exc
    finally:
        plugin.close()
    return None


def flush_error(settings: PersistenceSettings, session_id: str) -> str:
    backend = open_backend(settings)
    try:
        with pytest.raises(PersistenceError) as caught:
            backend.append(SessionInfo(session_id, 1.0), LogBuilder().turn(), durable=True)
    finally:
        backend.close()
    return str(caught.value)


def session_files(directory: Path) -> list[Path]:
    return list(directory.glob("*.jsonl"))


async def test_an_id_too_long_for_a_file_name_is_refused_at_create(
    settings: PersistenceSettings,
) -> None:
    session_id = "x" * 300
    error = await created(settings, session_id)
    if settings.backend == "sqlite":  # stored whole
        assert error is None
        return
    assert error is not None and "cannot be a file name" in str(error)
    assert str(error) == flush_error(settings, session_id)
    assert not session_files(settings.session_directory())


async def test_an_id_with_a_nul_never_reaches_a_backend(settings: Any) -> None:
    """``agents.create`` refuses a control character before any claim (``dsh._ids``)."""
    with pytest.raises(DshError, match=r"may not hold a control character \(U\+0000\)"):
        await created(settings, "a\x00b")


def test_postgresql_itself_refuses_an_id_with_a_nul(pg_url: str) -> None:
    """What a store given such an id by a program of its own says."""
    settings = PersistenceSettings(backend="postgresql", url=pg_url)
    assert "NUL" in flush_error(settings, "a\x00b")
