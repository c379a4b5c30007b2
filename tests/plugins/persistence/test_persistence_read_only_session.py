"""A JSONL session file this process may not write is refused when the session is
claimed (resumed), before any model call: the turn ran before, and its save failed.
``as_file_modes_say`` makes a ``0400`` file read-only for root too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from unprivileged import as_file_modes_say

from dsh.plugins import create_plugin_manager
from dsh.testing import ScriptedModel, scripted_harness, text
from dsh_persistence import (
    JsonlBackend,
    PersistenceError,
    PersistencePlugin,
    PersistenceSettings,
    SessionInfo,
)
from dsh_persistence.testing import LogBuilder

pytestmark = [
    pytest.mark.plugins("persistence"),
    pytest.mark.skipif(os.name == "nt", reason="claims are POSIX flock"),
]


def stored_read_only(directory: Path) -> Path:
    JsonlBackend(directory).append(SessionInfo("s", 1.0), LogBuilder().turn(), durable=True)
    path = directory / "s.jsonl"
    path.chmod(0o400)
    return path


def test_claiming_a_read_only_session_file_is_refused_naming_it(tmp_path: Path) -> None:
    path = stored_read_only(tmp_path)
    backend = JsonlBackend(tmp_path)
    with as_file_modes_say():
        with pytest.raises(PersistenceError) as caught:
            backend.claim("s")
        assert backend.load("s") is not None  # still read (list, show)
    assert str(caught.value) == f"{path}: cannot open the session file to write: Permission denied"
    path.chmod(0o600)
    assert backend.claim("s") is True  # writable again: claimed
    backend.close()


async def test_resuming_a_read_only_session_stops_before_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = stored_read_only(tmp_path)
    plugin = PersistencePlugin(PersistenceSettings(directory=tmp_path))
    model = ScriptedModel([text("hi")])
    pm = create_plugin_manager([("persistence", plugin)], load_entry_points=False)
    try:
        async with scripted_harness(model, pm=pm) as harness:
            claim = plugin.backend.claim

            def claim_as_file_modes_say(session_id: str) -> bool:
                # in the worker thread that claims: capabilities are a thread's own, and
                # trio's worker threads outlive a test (one started earlier has them all)
                with as_file_modes_say():
                    return claim(session_id)

            monkeypatch.setattr(plugin.backend, "claim", claim_as_file_modes_say)
            with pytest.raises(PersistenceError, match="Permission denied") as caught:
                await harness.agents.resume("a", "s", options={"model": "scripted"})
    finally:
        plugin.close()
    assert model.requests == [] and str(path) in str(caught.value)
