"""Reading a store that is not there finds nothing and creates nothing: ``dsh sessions
list``, ``show`` and ``delete`` beside a session directory or database no session has
been saved in yet leave no directory, database or claims behind (a SQLite database was
created, schema and all, by the first look)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from dsh.cli import main
from dsh_persistence import JsonlBackend, SqliteBackend
from dsh_persistence._backend import SessionBackend

pytestmark = pytest.mark.plugins("persistence")


@pytest.mark.parametrize("backend", ["jsonl", "sqlite"])
def test_the_sessions_commands_create_no_store(
    backend: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    monkeypatch.delenv("DSH_PERSISTENCE_DIR", raising=False)
    store = tmp_path / "not-yet"
    config = tmp_path / "dsh.yml"
    config.write_text(f"persistence:\n  backend: {backend}\n  directory: {store / 'sessions'}\n")
    args = ["--cwd", str(tmp_path), "sessions"]

    assert main([*args, "list"]) == 0
    assert "no stored sessions in " in capsys.readouterr().err
    assert main([*args, "show", "main-session-0"]) == 2
    assert "main-session-0" in capsys.readouterr().err
    assert main([*args, "delete", "main-session-0"]) == 1
    assert "main-session-0" in capsys.readouterr().err
    assert not store.exists()


@pytest.mark.parametrize("make", [JsonlBackend, SqliteBackend], ids=["jsonl", "sqlite"])
def test_a_backend_reads_a_store_that_is_not_there_as_empty(
    tmp_path: Path, make: Callable[[Path], SessionBackend]
) -> None:
    where = tmp_path / "not-yet" / ("sessions" if make is JsonlBackend else "s.sqlite3")
    backend = make(where)
    try:
        assert backend.headers() == []
        assert backend.load("main-session-0") is None
        assert backend.tail("main-session-0") is None
        assert backend.delete("main-session-0") is False
    finally:
        backend.close()
    assert not (tmp_path / "not-yet").exists()
