"""``dsh sessions delete`` deletes every id it can, whatever an id before it was: an
empty id, one too long for a JSONL file name, or one whose file is a FIFO stopped it
(``dsh: error: ...``, status 2) with the ids after it not deleted, while the SQLite
store said ``no stored session ''`` and went on (docs/persistence.md: "like ``rm``").
Each such id gets its line on stderr, status 1; the same words on every backend."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from persistence_cli_support import run, store

from dsh_persistence import PersistenceSettings
from dsh_persistence._files import file_name
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

LONG = "a" * 300


@pytest.fixture
def store_config(
    any_store: PersistenceSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A dsh.yml naming ``any_store`` (JSONL, SQLite, PostgreSQL), with two sessions."""
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "persistence")
    monkeypatch.chdir(tmp_path)
    for session_id in ("first", "second"):
        log = LogBuilder(start=1_700_000_000.0)
        log.turn("hello", calls=())
        store(any_store, session_id, log)
    path = tmp_path / "dsh.yml"
    if any_store.backend == "postgresql":
        path.write_text(f"persistence:\n  backend: postgresql\n  url: '{any_store.url}'\n")
    else:
        where = any_store.session_directory()
        path.write_text(f"persistence:\n  backend: {any_store.backend}\n  directory: {where}\n")
    return path


def stored(config: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert run(config, "list", "--json") == 0
    return [row["id"] for row in json.loads(capsys.readouterr().out)]


@pytest.mark.parametrize(
    ("wanted", "said"),
    [
        # an empty id names no session: said so, as show and resume say it
        ("", "the session id is empty: give one (`dsh sessions list` shows them)"),
        # no store holds one too long for a JSONL file name: not stored, on every backend
        # (quoted cut, with its length)
        (LONG, f"no stored session {'a' * 60!r}... (300 characters)"),
    ],
    ids=["empty", "long"],
)
def test_an_id_that_names_no_session_is_said_and_the_next_ids_are_deleted(
    store_config: Path, capsys: pytest.CaptureFixture[str], wanted: str, said: str
) -> None:
    assert run(store_config, "delete", wanted, "first") == 1
    captured = capsys.readouterr()
    assert captured.err == f"dsh: error: {said}\n"
    assert captured.out == "deleted first\n"
    assert stored(store_config, capsys) == ["second"]


def test_a_fifo_in_place_of_a_session_file_is_said_and_the_next_ids_are_deleted(
    settings: PersistenceSettings, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if settings.backend != "jsonl" or not hasattr(os, "mkfifo"):
        pytest.skip("a FIFO named as a session file is a JSONL store's")
    for session_id in ("first", "second"):
        log = LogBuilder(start=1_700_000_000.0)
        log.turn("hello", calls=())
        store(settings, session_id, log)
    fifo = settings.session_directory() / file_name("piped")
    os.mkfifo(fifo)

    assert run(config, "delete", "piped", "first") == 1
    captured = capsys.readouterr()
    assert captured.err.startswith(f"dsh: error: {fifo}: ")
    assert "not a regular file (a FIFO)" in captured.err
    assert captured.err.count("\n") == 1
    assert captured.out == "deleted first\n"
    assert fifo.exists()  # not a session's: left as it is
    assert sorted(stored(config, capsys)) == ["piped", "second"]
