"""A SQLite database that cannot hold sessions is refused when the harness starts, before
any model is called: a file that is not a database, one of a newer schema, one this
process may not write. ``prepare`` opens it (creating a new one) and writes to it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager, nullcontext
from pathlib import Path

import pytest
from unprivileged import as_file_modes_say

from dsh.errors import HookError
from dsh.plugins import create_plugin_manager
from dsh.testing import ScriptedModel, scripted_harness, text
from dsh_persistence import PersistenceError, PersistencePlugin, PersistenceSettings, SqliteBackend

pytestmark = pytest.mark.plugins("persistence")


def newer(path: Path) -> None:
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA user_version=99")
        db.commit()


def read_only(path: Path) -> None:
    SqliteBackend(path).prepare()  # a session database, then made read-only
    path.chmod(0o400)


CASES = {
    "not-sqlite": (lambda path: path.write_text("my notes\n"), "file is not a database"),
    "newer": (newer, "schema version 99 is newer"),
    "read-only": (read_only, "attempt to write a readonly database"),
}


@contextmanager
def case(tmp_path: Path, name: str) -> Iterator[tuple[Path, str]]:
    path = tmp_path / "notes.db"
    make, message = CASES[name]
    make(path)
    with as_file_modes_say() if name == "read-only" else nullcontext():
        yield path, message


@pytest.mark.parametrize("name", CASES)
def test_prepare_refuses_a_database_it_cannot_write_sessions_to(tmp_path: Path, name: str) -> None:
    with case(tmp_path, name) as (path, message):
        before = path.read_bytes()
        backend = SqliteBackend(path, source="persistence.database")
        with pytest.raises(PersistenceError, match=message) as caught:
            backend.prepare()
        backend.close()
    assert str(path) in str(caught.value)
    assert path.read_bytes() == before, "the file is left as it was"
    assert not path.with_name("notes.db-claims").exists()


@pytest.mark.parametrize("name", CASES)
async def test_the_harness_stops_before_any_model_is_called(tmp_path: Path, name: str) -> None:
    with case(tmp_path, name) as (path, message):
        settings = PersistenceSettings(backend="sqlite", database=path)
        plugin = PersistencePlugin(settings)
        model = ScriptedModel([text("hi")])
        pm = create_plugin_manager([("persistence", plugin)], load_entry_points=False)
        entered = False
        try:
            with pytest.raises(HookError) as caught:
                async with scripted_harness(model, pm=pm):
                    entered = True
        finally:
            plugin.close()
    assert not entered and model.requests == []
    assert message in str(caught.value) and "persistence.database" in str(caught.value)
    assert not path.with_name("notes.db-claims").exists()


def test_prepare_creates_a_new_database_and_leaves_it_usable(tmp_path: Path) -> None:
    path = tmp_path / "new" / "sessions.sqlite3"
    backend = SqliteBackend(path)
    backend.prepare()
    backend.prepare()  # again, by another harness of the process: still fine
    assert backend.headers() == []
    backend.close()
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 1


async def test_a_new_session_that_cannot_be_claimed_is_refused_before_the_model(
    tmp_path: Path,
) -> None:
    """Fail closed: a new session whose claim fails (here ``<database>-claims`` is a
    file) is refused as its agent is created; it ran before, and every save failed."""
    path = tmp_path / "sessions.sqlite3"
    path.with_name("sessions.sqlite3-claims").write_text("in the way\n")
    plugin = PersistencePlugin(PersistenceSettings(backend="sqlite", database=path))
    model = ScriptedModel([text("hi")])
    pm = create_plugin_manager([("persistence", plugin)], load_entry_points=False)
    try:
        async with scripted_harness(model, pm=pm) as harness:
            with pytest.raises(PersistenceError, match=r"sessions\.sqlite3-claims"):
                await harness.agents.create("a", options={"model": "scripted"})
            assert not harness.agents.list()
    finally:
        plugin.close()
    assert model.requests == []
