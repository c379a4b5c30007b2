"""``dsh sessions list | show | delete`` read the store through a harness that starts no
agent (``CommandContext.harness(starts_agents=False)``, as `dsh models` has it): every
plugin's ``harness_started`` runs first, so a store that a plugin sets up there (where
plugins read their settings, as dsh-persistence does) is the one they read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsh import hookimpl
from dsh.cli import main
from dsh.persistence import StoredSession
from dsh.session import SessionEvent
from dsh.testing import InMemoryPersistence

pytestmark = pytest.mark.plugins("persistence")


class StartedStore(InMemoryPersistence):
    """Sessions in memory, opened as a harness starts, answering before dsh-persistence;
    before that it answers nothing (the hook goes on to the next plugin)."""

    def __init__(self) -> None:
        super().__init__()
        self.opened = False

    @hookimpl
    def harness_started(self, harness: Any) -> None:
        self.opened = True
        event = SessionEvent("user/message", 0, 1_700_000_000.0, {"content": "kept here"})
        self.stored["started-session"] = StoredSession(
            "started-session", 1_700_000_000.0, [event], {}
        )

    @hookimpl(tryfirst=True)
    def session_persistence(self) -> InMemoryPersistence | None:
        return self if self.opened else None


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> StartedStore:
    import dsh.harness  # binds create_plugin_manager by name: imported before the patch
    import dsh.plugins

    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    monkeypatch.setenv("DSH_PERSISTENCE_DIR", str(tmp_path / "sessions"))
    monkeypatch.chdir(tmp_path)
    started = StartedStore()
    real = dsh.plugins.create_plugin_manager

    def with_store(plugins: Any = (), **kwargs: Any) -> Any:
        return real([("started-store", started), *plugins], **kwargs)

    monkeypatch.setattr(dsh.plugins, "create_plugin_manager", with_store)
    assert dsh.harness is not None
    return started


def test_sessions_read_the_store_a_plugin_opens_as_the_harness_starts(
    store: StartedStore, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sessions", "list", "--json"]) == 0
    listed = capsys.readouterr()
    assert [row["id"] for row in json.loads(listed.out)] == ["started-session"], listed.err
    assert main(["sessions", "show", "started-session"]) == 0
    assert "kept here" in capsys.readouterr().out
    assert main(["sessions", "delete", "started-session"]) == 0
    assert "started-session" not in store.stored


def test_sessions_read_that_store_beside_a_model_that_cannot_be_built(
    store: StartedStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An entry of ``models:`` nobody can build is a warning here (no agent runs), and
    the plugins have still started: the store opened then is the one listed."""
    (tmp_path / "dsh.yml").write_text("models:\n  m: {provider: nosuchprov, model: x}\n")
    assert main(["sessions", "list", "--json"]) == 0
    listed = capsys.readouterr()
    assert [row["id"] for row in json.loads(listed.out)] == ["started-session"]
    assert "models.m.provider: unknown provider 'nosuchprov'" in listed.err
    assert main(["sessions", "delete", "started-session"]) == 0
    assert "started-session" not in store.stored
