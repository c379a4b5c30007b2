"""Unusable places and I/O failures are ``PersistenceError``s saying what, where and why.

A session directory that is a file (or under one, or in ``/proc``), a directory where a
session file or the database should be: every backend method reports the path (and,
for the directory or database itself, the setting it comes from), never a bare
``OSError``; a harness reports a bad location when it starts, and again at each flush.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from unprivileged import as_file_modes_say

from dsh.errors import HookError
from dsh.plugins import create_plugin_manager
from dsh.testing import ErrorRecorder, ScriptedModel, run_turn, scripted_harness, text
from dsh_persistence import (
    JsonlBackend,
    PersistenceError,
    PersistencePlugin,
    PersistenceSettings,
    SessionInfo,
    SqliteBackend,
    open_backend,
)
from dsh_persistence.testing import LogBuilder

pytestmark = pytest.mark.plugins("persistence")

LIMIT = 10
EVENTS = LogBuilder().turn()


def unusable(tmp_path: Path, kind: str) -> Path:
    """A directory setting that cannot hold sessions."""
    (tmp_path / "a-file").write_text("not a directory\n")
    if kind == "file":
        return tmp_path / "a-file"
    if kind == "under-a-file":
        return tmp_path / "a-file" / "sessions"
    if not sys.platform.startswith("linux") or not Path("/proc/self").exists():
        pytest.skip("needs Linux /proc")
    return Path("/proc/nope")


KINDS = ["file", "under-a-file", "proc"]


def refuse(call: object, *pieces: str) -> str:
    assert callable(call)
    with pytest.raises(PersistenceError) as caught:
        call()
    message = str(caught.value)
    for piece in pieces:
        assert piece in message
    assert isinstance(caught.value.__cause__, OSError)  # the original error is kept
    return message


@pytest.mark.parametrize("kind", KINDS)
def test_an_unusable_directory_is_named_with_its_setting_by_every_method(
    settings: PersistenceSettings, tmp_path: Path, kind: str
) -> None:
    directory = unusable(tmp_path, kind)
    chosen = settings.model_copy(update={"directory": directory})
    backend = open_backend(chosen)
    try:
        for call in (
            backend.prepare,
            lambda: backend.append(SessionInfo("s", 1.0), EVENTS, durable=True),
        ):
            refuse(call, str(directory), "persistence.directory")
        for call in (backend.headers, lambda: backend.load("s"), lambda: backend.tail("s")):
            if kind == "proc":  # a store that does not exist holds no session: not
                assert not call()  # created to say so (SQLite's database neither)
            else:
                refuse(call, str(directory), "persistence.directory")
    finally:
        backend.close()


def test_a_directory_where_a_session_file_should_be_is_named(tmp_path: Path) -> None:
    backend = JsonlBackend(tmp_path)
    (tmp_path / "s.jsonl").mkdir()
    path = str(tmp_path / "s.jsonl")

    refuse(lambda: backend.load("s"), path, "cannot read the session file", "Is a directory")
    refuse(lambda: backend.tail("s"), path, "Is a directory")
    refuse(lambda: backend.append(SessionInfo("s", 1.0), EVENTS, durable=True), path)
    refuse(lambda: backend.delete("s"), path, "cannot delete the session file")
    assert (tmp_path / "s.jsonl").is_dir()  # nothing was removed or replaced


def test_a_directory_where_the_database_should_be_is_named(tmp_path: Path) -> None:
    (tmp_path / "db").mkdir()
    settings = PersistenceSettings(backend="sqlite", database=tmp_path / "db")
    backend = open_backend(settings)
    assert isinstance(backend, SqliteBackend)
    try:
        for call in (backend.prepare, backend.headers, lambda: backend.load("s")):
            with pytest.raises(PersistenceError) as caught:
                call()
            assert f"{tmp_path / 'db'} (persistence.database)" in str(caught.value)
            assert "it is a directory" in str(caught.value)
    finally:
        backend.close()


def test_a_directory_without_write_permission_is_reported(tmp_path: Path) -> None:
    directory = tmp_path / "read-only"
    directory.mkdir(mode=0o500)
    backend = JsonlBackend(directory, source="persistence.directory")
    try:
        with as_file_modes_say():  # root ignores modes: not without its DAC capabilities
            message = refuse(lambda: backend.append(SessionInfo("s", 1.0), EVENTS, durable=True))
            with pytest.raises(PersistenceError, match="create files in it"):
                backend.prepare()
        assert str(directory) in message and "Permission denied" in message
    finally:
        directory.chmod(0o700)


@pytest.mark.parametrize("kind", KINDS)
async def test_an_unusable_directory_stops_the_harness_before_any_model_is_called(
    settings: PersistenceSettings, tmp_path: Path, kind: str
) -> None:
    directory = unusable(tmp_path, kind)
    plugin = PersistencePlugin(settings.model_copy(update={"directory": directory}))
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
    assert (caught.value.plugin, caught.value.hook) == ("persistence", "harness_started")
    assert isinstance(caught.value.cause, PersistenceError)
    assert str(directory) in str(caught.value) and "persistence.directory" in str(caught.value)


async def test_a_directory_lost_after_start_is_reported_by_each_flush_and_the_agent_runs_on(
    tmp_path: Path,
) -> None:
    """An agent live when its session directory becomes a file runs on, each flush
    reporting the directory (JSONL: a SQLite database open then is still written)."""
    directory = tmp_path / "sessions"
    plugin = PersistencePlugin(PersistenceSettings(directory=directory))
    errors = ErrorRecorder()
    pm = create_plugin_manager(
        [("persistence", plugin), ("errors", errors)], load_entry_points=False
    )
    try:
        async with scripted_harness(ScriptedModel([text("hi"), text("again")]), pm=pm) as harness:
            agent = await harness.agents.create("a", options={"model": "scripted"})
            for path in directory.iterdir():  # the lock file of the new session's claim
                path.unlink()
            directory.rmdir()
            directory.write_text("a file now\n")
            with anyio.fail_after(LIMIT):
                await run_turn(agent, "hello")
                events = await run_turn(agent, "hello again")
    finally:
        plugin.close()
    assert events[-1].data["reason"] == "completed"  # the agent kept running
    # each turn's flush, and the last one when the agent is disposed
    assert len(errors.errors) == 3, "each failed flush is reported"
    for error in errors.errors:
        assert str(directory) in str(error) and "persistence.directory" in str(error)


async def test_a_new_agent_after_the_directory_was_lost_is_refused_before_the_model(
    settings: PersistenceSettings, tmp_path: Path
) -> None:
    """Fail closed: the claim of a new session finds the store unusable, and the agent
    is not created (it ran before, and no save of it could succeed)."""
    directory = tmp_path / "sessions"
    plugin = PersistencePlugin(settings.model_copy(update={"directory": directory}))
    model = ScriptedModel([text("hi")])
    pm = create_plugin_manager([("persistence", plugin)], load_entry_points=False)
    try:
        async with scripted_harness(model, pm=pm) as harness:
            for path in directory.iterdir():
                path.unlink()
            directory.rmdir()
            directory.write_text("a file now\n")
            with pytest.raises(PersistenceError) as caught:
                await harness.agents.create("a", options={"model": "scripted"})
    finally:
        plugin.close()
    assert model.requests == []
    assert str(directory) in str(caught.value)
