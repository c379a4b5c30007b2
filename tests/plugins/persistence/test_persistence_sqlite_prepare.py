"""A SQLite database that cannot hold sessions is refused when the harness starts, before
any model is called: a file that is not a database, one of a newer schema, one this
process may not write, a directory where it cannot be created. ``prepare`` checks that
without changing anything: another program's database is refused and stays as it was
(``dsh config check`` starts a harness too), and a missing one is created by the first
save."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager, nullcontext
from pathlib import Path

import pytest
from unprivileged import as_file_modes_say

from dsh.cli import main
from dsh.errors import HookError
from dsh.plugins import create_plugin_manager
from dsh.testing import ScriptedModel, scripted_harness, text
from dsh_persistence import (
    PersistenceError,
    PersistencePlugin,
    PersistenceSettings,
    SessionInfo,
    SqliteBackend,
)
from dsh_persistence._sqlite_schema import APPLICATION_ID
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

LOG = LogBuilder()
LOG.turn("one")


def newer(path: Path) -> None:
    with closing(sqlite3.connect(path)) as db:
        db.execute(f"PRAGMA application_id={APPLICATION_ID}")  # a newer dsh's mark
        db.execute("PRAGMA user_version=99")
        db.commit()


def other_programs(path: Path) -> None:
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE notes (line TEXT)")
        db.execute("INSERT INTO notes VALUES ('mine')")
        db.commit()


def read_only(path: Path) -> None:
    path.touch()  # an empty database: dsh creates its tables in one
    path.chmod(0o400)


def listed(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def described(path: Path) -> tuple[str, int, list[str]]:
    """The journal mode, version and tables of the database ``path``."""
    with closing(sqlite3.connect(path)) as db:
        mode = db.execute("PRAGMA journal_mode").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")
        return mode, version, [row[0] for row in tables]


CASES = {
    "not-sqlite": (lambda path: path.write_text("my notes\n"), "file is not a database"),
    "newer": (newer, "schema version 99 is newer"),
    "read-only": (read_only, "cannot write to the session database: Permission denied"),
    "another program's": (
        other_programs,
        "user_version 0, and it holds another program's tables: notes",
    ),
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


async def test_a_start_leaves_another_programs_database_as_it_was(tmp_path: Path) -> None:
    """A harness start (as ``dsh config check`` runs one) pointed at another program's
    database (``user_version`` 0, its own tables) refuses it and changes nothing: no
    tables, no WAL, no version, no file. (It was accepted, and the first save created
    dsh's tables in it.)"""
    path = tmp_path / "app.db"
    other_programs(path)
    before = path.read_bytes()
    plugin = PersistencePlugin(PersistenceSettings(backend="sqlite", database=path))
    pm = create_plugin_manager([("persistence", plugin)], load_entry_points=False)
    try:
        with pytest.raises(HookError, match="not a dsh session database"):
            async with scripted_harness(ScriptedModel([text("hi")]), pm=pm):
                pass
    finally:
        plugin.close()
    assert path.read_bytes() == before
    assert listed(tmp_path) == ["app.db"]
    assert described(path) == ("delete", 0, ["notes"])


def test_dsh_config_check_leaves_another_programs_database_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "app.db"
    other_programs(path)
    before = path.read_bytes()
    config = tmp_path / "dsh.yml"
    config.write_text(f"persistence: {{backend: sqlite, database: {path}}}\n")
    assert main(["-p", "persistence", "-c", str(config), "config", "check"]) != 0
    assert "not a dsh session database (user_version 0" in capsys.readouterr().err
    assert path.read_bytes() == before
    assert listed(tmp_path) == ["app.db", "dsh.yml"]
    assert described(path) == ("delete", 0, ["notes"])


def test_prepare_creates_no_database_and_the_first_save_creates_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "new" / "sessions.sqlite3"
    backend = SqliteBackend(path)
    backend.prepare()
    backend.prepare()  # again, by another harness of the process: still fine
    assert listed(tmp_path / "new") == []  # its directory only, as JSONL's
    backend.append(SessionInfo("s", 1.0), LOG.events, durable=True)
    backend.prepare()  # connected: still fine
    assert backend.headers()[0].id == "s"
    backend.close()
    assert described(path) == ("wal", 1, ["events", "sessions", "workspaces"])


@pytest.mark.parametrize("exists", [True, False])
def test_a_read_only_directory_is_named_not_the_database(tmp_path: Path, exists: bool) -> None:
    directory = tmp_path / "shelf"
    directory.mkdir()
    path = directory / "app.db"
    if exists:
        other_programs(path)  # writable itself: its -wal, -shm, -claims cannot be made
    directory.chmod(0o500)
    try:
        with as_file_modes_say(), pytest.raises(PersistenceError) as caught:
            SqliteBackend(path).prepare()
    finally:
        directory.chmod(0o700)
    made = "app.db-wal, app.db-shm, app.db-claims"
    made = made if exists else f"app.db, {made}"
    assert f"cannot create {made} in the directory {directory}: Permission denied" in str(
        caught.value
    )
    assert listed(directory) == (["app.db"] if exists else [])


async def test_a_new_session_that_cannot_be_claimed_is_refused_before_the_model(
    tmp_path: Path,
) -> None:
    """Fail closed: a new session whose claim fails (here ``<database>-claims`` became a
    file after the start's check) is refused as its agent is created; it ran before,
    and every save failed."""
    path = tmp_path / "sessions.sqlite3"
    plugin = PersistencePlugin(PersistenceSettings(backend="sqlite", database=path))
    model = ScriptedModel([text("hi")])
    pm = create_plugin_manager([("persistence", plugin)], load_entry_points=False)
    try:
        async with scripted_harness(model, pm=pm) as harness:
            path.with_name("sessions.sqlite3-claims").write_text("in the way\n")
            with pytest.raises(PersistenceError, match=r"sessions\.sqlite3-claims"):
                await harness.agents.create("a", options={"model": "scripted"})
            assert not harness.agents.list()
    finally:
        plugin.close()
    assert model.requests == []


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs a Linux /proc")
def test_a_directory_no_claims_directory_can_be_made_in_is_refused_at_start() -> None:
    """/proc: to root the OS's access check says it may be written, and the database is
    missing, so nothing else is looked at; the first claim failed (``cannot claim
    session ... /proc/x.db-claims: No such file or directory``), after the start."""
    backend = SqliteBackend(Path("/proc/x.db"), source="persistence.database")
    try:
        with pytest.raises(PersistenceError) as caught:
            backend.prepare()
    finally:
        backend.close()
    said = str(caught.value)
    assert said.startswith("/proc/x.db (persistence.database): cannot create "), said
    assert "x.db-claims" in said


async def test_a_claims_path_that_is_no_directory_stops_the_start(tmp_path: Path) -> None:
    path = tmp_path / "sessions.sqlite3"
    path.with_name("sessions.sqlite3-claims").write_text("in the way\n")
    plugin = PersistencePlugin(PersistenceSettings(backend="sqlite", database=path))
    model = ScriptedModel([text("hi")])
    pm = create_plugin_manager([("persistence", plugin)], load_entry_points=False)
    try:
        with pytest.raises(HookError) as caught:
            async with scripted_harness(model, pm=pm):
                pass
    finally:
        plugin.close()
    assert isinstance(caught.value.cause, PersistenceError)
    assert str(caught.value.cause) == (
        f"{path} (persistence.database): cannot create files in the claims directory "
        f"{path}-claims: Not a directory"
    )
    assert model.requests == []
    assert listed(tmp_path) == ["sessions.sqlite3-claims"]


def test_the_check_of_an_existing_claims_directory_leaves_it_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "sessions.sqlite3"
    claims = path.with_name("sessions.sqlite3-claims")
    claims.mkdir()
    (claims / "kept.txt").write_text("not dsh's\n")
    backend = SqliteBackend(path)
    backend.prepare()
    backend.close()
    assert listed(tmp_path) == ["sessions.sqlite3-claims"]
    assert listed(claims) == ["kept.txt"]
